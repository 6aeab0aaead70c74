"""tprobe.mindspore.seed_all against the installed msprobe's: after
seed_all(7, mode=True) in a fresh process, Python's random, MindSpore's
random ops, PYTHONHASHSEED, HCCL_DETERMINISTIC and MindSpore's
deterministic context are the same under both; bad arguments and
rm_dropout (which tprobe does not do for MindSpore) raise saying so.
"""

import os
import subprocess
import sys
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import python_path  # noqa: E402

# argv: tool. Prints what seed_all set.
SCRIPT = textwrap.dedent("""
    import os, random, sys
    import mindspore as ms
    from mindspore import ops
    if sys.argv[1] == "msprobe":
        from msprobe.mindspore import seed_all
    else:
        from tprobe.mindspore import seed_all
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    seed_all(7, mode=True)
    print(random.random())
    print(ops.standard_normal((4,)).asnumpy().tolist())
    print(ops.uniform((3,), ms.Tensor(0.0), ms.Tensor(1.0)).asnumpy().tolist())
    print(os.environ["PYTHONHASHSEED"], os.environ["HCCL_DETERMINISTIC"])
    print(ms.get_context("deterministic"))
""")


def run(tool: str) -> str:
    env = dict(os.environ, GLOG_v="3",
               PYTHONPATH=python_path() + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", SCRIPT, tool], env=env,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise AssertionError(f"{tool} failed:\n{out.stderr[-3000:]}")
    return out.stdout


class SeedAllTest(unittest.TestCase):
    def test_same_state_as_msprobe(self) -> None:
        tprobe = run("tprobe")
        self.assertIn("7 True\nON\n", tprobe)
        self.assertEqual(tprobe, run("msprobe"))

    def test_bad_arguments_and_rm_dropout_raise(self) -> None:
        sys.path.insert(0, python_path())
        from tprobe.mindspore import seed_all
        with self.assertRaisesRegex(ValueError, "seed must be between"):
            seed_all(-1)
        with self.assertRaisesRegex(ValueError, "mode must be a bool"):
            seed_all(1, mode=1)
        with self.assertRaisesRegex(NotImplementedError,
                                    "rm_dropout is not supported by "
                                    "tprobe.mindspore; set the networks' "
                                    "dropout probability to 0"):
            seed_all(1, rm_dropout=True)


if __name__ == "__main__":
    unittest.main()
