"""msprobe's config.json as its users write it, under tprobe:

- every config.json example of msprobe's docs (every page of the
  installed msprobe 8.3.3 copy's docs/: the config examples for PyTorch,
  MindSpore static and dynamic graph, the save() instructions, the kernel
  dump, grad_probe and quick-start pages; 26.2's wheel has no docs), 26.2's
  packaged config.json and its ATB example: each loads, or is refused with
  a message that says what tprobe does not support;
- a PrecisionDebugger names each key without effect once on stderr;
- summary_mode in the tensor section: task tensor with md5 writes each
  tensor's CRC-32 (checked against the .npy file's bytes, and against
  msprobe 26.2 on the same script when installed);
- every public name of msprobe.pytorch (and msprobe.mindspore) is in
  tprobe.torch (tprobe.mindspore); the ones tprobe does not provide, and
  start()'s inference arguments, raise saying what tprobe does instead;
- dump_enable, msprobe's dynamic control: a script that rewrites
  config.json to true before step 3 and to false before step 6 gives the
  same step folders under msprobe 26.2 (run here when installed) and
  tprobe; other changed fields (level, summary_mode, data_mode, step) take
  effect at the same steps under both, and so does a new dump_path; a
  change to the "tprobe" section is refused with a warning; a file that
  no longer parses stops dumping and training goes on.
"""

import ast
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
import unittest
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from tprobed_fixture import (ROOT, Tprobed, fresh_dir,  # noqa: E402
                             python_path, tprobed_binary)

sys.path.insert(0, python_path())
from tprobe import _C  # noqa: E402

MSPROBE_833 = os.environ.get("TPROBE_MSPROBE_833") or os.path.join(
    ROOT, ".venv", "msprobe833")
DOCS = os.path.join(MSPROBE_833, "msprobe", "docs")
HAS_MSPROBE = importlib.util.find_spec("msprobe") is not None

# What tprobe says for each example it refuses.
NOT_SUPPORTED = "is not supported by tprobe"

# The dynamic-control scenario; argv: tool, config path, dump path.
DUMP_ENABLE_SCRIPT = textwrap.dedent("""
    import json, sys, time, torch, torch.nn as nn
    tool, config_path, dump_path = sys.argv[1:4]
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger

    def write(enable):
        with open(config_path, "w") as f:
            json.dump({"task": "statistics", "dump_path": dump_path,
                       "level": "L1", "dump_enable": enable}, f)

    write(False)
    d = PrecisionDebugger(config_path=config_path)
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    for step in range(8):
        # msprobe looks at the file every 3 s while not dumping, every
        # 0.5 s while dumping: each rewrite is given the time to be seen.
        if step == 3:
            write(True)
            time.sleep(3.2)
        if step == 6:
            write(False)
            time.sleep(0.7)
        d.start(model)
        model(x).sum().backward()
        d.stop()
        d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
""")

# dump_enable stays true; other fields change: level mix before step 2,
# md5 and forward only before step 4, the step list [6] before step 5.
# argv: tool, config path, dump path.
CHANGED_FIELDS_SCRIPT = textwrap.dedent("""
    import json, sys, time, torch, torch.nn as nn
    tool, config_path, dump_path = sys.argv[1:4]
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger

    def write(**fields):
        config = {"task": "statistics", "dump_path": dump_path,
                  "level": "L1", "dump_enable": True}
        config.update(fields)
        with open(config_path, "w") as f:
            json.dump(config, f)

    write()
    d = PrecisionDebugger(config_path=config_path)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    x = torch.randn(3, 4)
    changes = {2: {"level": "mix"},
               4: {"statistics": {"summary_mode": "md5",
                                  "data_mode": ["forward"]}},
               5: {"step": [6]}}
    for step in range(7):
        if step in changes:
            write(**changes[step])
            time.sleep(0.7)  # past msprobe's 0.5 s between two looks
        d.start(model)
        model(x).sum().backward()
        d.stop()
        d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
""")

# A file whose dump_path and level change before step 1.
# argv: tool, config path, dump path.
MOVED_PATH_SCRIPT = textwrap.dedent("""
    import json, sys, time, torch, torch.nn as nn
    tool, config_path, dump_path = sys.argv[1:4]
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger

    def write(path, level):
        with open(config_path, "w") as f:
            json.dump({"task": "statistics", "dump_path": path,
                       "level": level, "dump_enable": True}, f)

    write(dump_path, "L1")
    d = PrecisionDebugger(config_path=config_path)
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    for step in range(3):
        if step == 1:
            write(dump_path + "-moved", "mix")
            time.sleep(0.7)
        d.start(model)
        model(x).sum().backward()
        d.stop()
        d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
""")

# A file whose "tprobe" section changes before step 1: the rings are made.
# argv: config path, dump path.
FIXED_KEY_SCRIPT = textwrap.dedent("""
    import json, sys, time, torch, torch.nn as nn
    from tprobe.torch import PrecisionDebugger
    config_path, dump_path = sys.argv[1:3]

    def write(level, tprobe):
        with open(config_path, "w") as f:
            json.dump({"task": "statistics", "dump_path": dump_path,
                       "level": level, "dump_enable": True,
                       "tprobe": tprobe}, f)

    write("L1", {})
    d = PrecisionDebugger(config_path=config_path)
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    for step in range(3):
        if step == 1:
            write("mix", {"ring_count": 2})
            time.sleep(0.7)
        d.start(model)
        model(x).sum().backward()
        d.stop()
        d.step()
    assert d.session.flush(30000)
""")

# A file that stops parsing before step 2.
BROKEN_FILE_SCRIPT = textwrap.dedent("""
    import json, sys, time, torch, torch.nn as nn
    from tprobe.torch import PrecisionDebugger
    config_path, dump_path = sys.argv[1:3]
    with open(config_path, "w") as f:
        json.dump({"task": "statistics", "dump_path": dump_path,
                   "level": "L1", "dump_enable": True}, f)
    d = PrecisionDebugger(config_path=config_path)
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    for step in range(4):
        if step == 2:
            with open(config_path, "w") as f:
                f.write('{"task": "statistics", "dump_enable": ')
            time.sleep(0.7)
        d.start(model)
        model(x).sum().backward()
        d.stop()
        d.step()
    assert d.session.flush(30000)
    print("trained to the end")
""")


# Task tensor with summary_mode md5; argv: tool, dump path.
TENSOR_MD5_SCRIPT = textwrap.dedent("""
    import json, os, sys, torch
    tool, dump = sys.argv[1:3]
    if tool == "msprobe":
        from msprobe.pytorch import PrecisionDebugger
    else:
        from tprobe.torch import PrecisionDebugger
    os.makedirs(dump)
    config = os.path.join(dump, "config.json")
    with open(config, "w") as f:
        json.dump({"task": "tensor", "dump_path": dump, "level": "L1",
                   "tensor": {"summary_mode": "md5"}}, f)
    d = PrecisionDebugger(config_path=config)
    torch.manual_seed(0)
    weight, x = torch.randn(2, 3), torch.randn(4, 3)
    d.start()
    torch.nn.functional.linear(x, weight)
    d.stop()
    d.step()
    if tool == "tprobe":
        assert d.session.flush(30000)
""")


def doc_examples() -> list:
    """(where, config) for each code block of every page of the docs that
    is a config.json: a JSON object with a "task" and no "data" (a dump.json
    sample has both)."""
    out = []
    for path in sorted(glob.glob(os.path.join(DOCS, "**", "*.md"),
                                 recursive=True)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        name = os.path.relpath(path, DOCS)
        for i, block in enumerate(re.findall(r"```(?:json)?[ \t]*\n(.*?)```",
                                             text, re.S)):
            try:
                config = json.loads(block)
            except ValueError:
                continue
            if (isinstance(config, dict) and "task" in config
                    and "data" not in config):
                out.append((f"{name} block {i}", config))
    return out


def expected_refusal(config: dict) -> str:
    """The part of tprobe's message for a config it refuses; "" when it
    loads."""
    task, level = config.get("task"), config.get("level")
    if task in ("run_ut", "acc_check"):
        return "online accuracy checker (task acc_check, formerly run_ut)"
    if task == "free_benchmark":
        return "free benchmark (task free_benchmark)"
    if task == "exception_dump":
        return "exception dump (task exception_dump"
    if task == "grad_probe":
        return "gradient monitor (task grad_probe)"
    if level == "L2":
        return "kernel dump (level L2)"
    if level == "debug" and task not in (None, "statistics", "tensor"):
        return "tprobe takes it with task statistics or tensor"
    return ""


class ConfigExamplesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = fresh_dir("tp-cfgex-")

    def load(self, config: dict) -> list:
        path = os.path.join(self.tmp, "config.json")
        with open(path, "w") as f:
            json.dump(config, f)
        return _C.config_warnings(path)

    @unittest.skipUnless(os.path.isdir(DOCS),
                         f"no msprobe docs in {DOCS} (deploy/venv.sh)")
    def test_every_docs_example_loads_or_is_refused_by_name(self) -> None:
        examples = doc_examples()
        # 16 in the config examples, one in the save() instructions, the
        # rest in the introduction, kernel dump, grad_probe and quick-start
        # pages.
        self.assertEqual(len(examples), 23)
        loaded = 0
        for where, config in examples:
            with self.subTest(where=where, config=config):
                refusal = expected_refusal(config)
                if not refusal:
                    self.assertEqual(self.load(config), [])
                    loaded += 1
                    continue
                with self.assertRaises(ValueError) as raised:
                    self.load(config)
                self.assertIn(refusal, str(raised.exception))
                self.assertIn(NOT_SUPPORTED, str(raised.exception))
        # statistics, tensor, overflow_check and structure, for PyTorch and
        # MindSpore's dynamic graph, level debug (save()), and the two
        # quick-start examples.
        self.assertEqual(loaded, 11)

    @unittest.skipUnless(HAS_MSPROBE, "no msprobe 26.x in this Python")
    def test_msprobe_26_packaged_configs(self) -> None:
        package = os.path.dirname(importlib.util.find_spec("msprobe").origin)
        with open(os.path.join(package, "config.json")) as f:
            self.assertEqual(self.load(json.load(f)), [])
        atb = glob.glob(os.path.join(package, "scripts", "atb", "*.json"))
        self.assertTrue(atb)
        for path in atb:
            with open(path) as f:
                config = json.load(f)
            with self.assertRaises(ValueError) as raised:
                self.load(config)
            self.assertIn("msprobe's ATB dump", str(raised.exception))
            self.assertIn(NOT_SUPPORTED, str(raised.exception))

    def test_issue_examples_load_with_one_warning_per_key(self) -> None:
        # The keys msprobe's own test config.json and 26.2's main tensor
        # example carry, and ranks and steps as its docs write them.
        warnings = self.load({
            "task": "tensor", "dump_path": "./dump", "level": "L1",
            "rank": [1, "0", "4-6"], "step": [0, "2", "4-5"],
            "acl_config": "./acl.json", "seed": 1234,
            "is_deterministic": True,
            "tensor": {"scope": [], "list": [], "data_mode": ["all"],
                       "bench_path": "./bench", "diff_nums": 3},
            "statistics": {"slice": [{"dim": 0}]},
        })
        self.assertEqual([w.split(" has no effect")[0] for w in warnings],
                         ["config: acl_config", "config: seed",
                          "config: is_deterministic",
                          "config: tensor.bench_path",
                          "config: tensor.diff_nums"])

    def test_a_typo_is_refused_with_the_nearest_key(self) -> None:
        with self.assertRaises(ValueError) as raised:
            self.load({"task": "statistics", "lvel": "L0"})
        self.assertIn("unknown key 'lvel' at the top level (did you mean "
                      "'level'?)", str(raised.exception))


class DebuggerWarningsTest(unittest.TestCase):
    def test_each_key_without_effect_is_named_once(self) -> None:
        tmp = fresh_dir("tp-cfgwarn-")
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"task": "statistics", "level": "L1", "seed": 7,
                       "dump_path": os.path.join(tmp, "dump"),
                       "statistics": {"request_id": "r1"}}, f)
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run = subprocess.run(
                [sys.executable, "-c",
                 "import sys\n"
                 "from tprobe.torch import PrecisionDebugger\n"
                 "PrecisionDebugger(config_path=sys.argv[1])\n"
                 "PrecisionDebugger(config_path=sys.argv[1])\n", config],
                env=daemon.env(), timeout=300, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = [line for line in run.stderr.splitlines()
                 if "has no effect" in line]
        self.assertEqual(lines, [
            "[tprobe] config: seed has no effect: tprobe does not seed from "
            "config.json; call tprobe.torch.seed_all(seed=..., mode=...)",
            "[tprobe] config: statistics.request_id has no effect: it "
            "selects an inference request; tprobe dumps every call"])


def msprobe_public_names(package: str) -> list:
    """The names msprobe's `package` (pytorch, mindspore) exports: its
    __init__.py's imports, read without importing it."""
    spec = importlib.util.find_spec("msprobe")
    path = os.path.join(os.path.dirname(spec.origin), package, "__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "torch":
            names += [a.asname or a.name for a in node.names]
    return sorted(set(n for n in names if not n.startswith("_")))


class ApiSurfaceTest(unittest.TestCase):
    def test_refused_names_say_what_tprobe_does_instead(self) -> None:
        import tprobe.torch as tt
        for name in ("random_save", "set_fx_dump_config",
                     "set_ge_dump_config", "TrainerMon", "acl_save",
                     "AclGraphDumper"):
            with self.subTest(name=name):
                with self.assertRaises(NotImplementedError) as raised:
                    getattr(tt, name)()
                self.assertRegex(str(raised.exception),
                                 f"^{name} is not supported by tprobe: .+")
        with self.assertRaises(NotImplementedError) as raised:
            tt.PrecisionDebugger.register_custom_api(object(), "f")
        self.assertIn("register_custom_api is not supported by tprobe: "
                      "tprobe hooks its own API list", str(raised.exception))
        for arg in ("token_range", "rank_id", "scheduled_tokens"):
            with self.subTest(arg=arg):
                with self.assertRaises(NotImplementedError) as raised:
                    tt.PrecisionDebugger.start(None, **{arg: [0, 1]})
                self.assertIn(f"{arg} is not supported by tprobe",
                              str(raised.exception))
                self.assertIn("call start(model) without it",
                              str(raised.exception))

    @unittest.skipUnless(HAS_MSPROBE, "no msprobe 26.x in this Python")
    def test_every_msprobe_pytorch_name_is_in_tprobe_torch(self) -> None:
        import tprobe.torch as tt
        names = msprobe_public_names("pytorch")
        self.assertIn("PrecisionDebugger", names)
        self.assertEqual([n for n in names if not hasattr(tt, n)], [])

    @unittest.skipUnless(HAS_MSPROBE and importlib.util.find_spec(
        "mindspore") is not None, "no msprobe 26.x or MindSpore")
    def test_every_msprobe_mindspore_name_is_in_tprobe_mindspore(self) -> None:
        import tprobe.mindspore as tm
        names = msprobe_public_names("mindspore")
        self.assertIn("save_grad", names)
        self.assertEqual([n for n in names if not hasattr(tm, n)], [])
        with self.assertRaises(NotImplementedError) as raised:
            tm.save_grad()
        self.assertIn("save_grad is not supported by tprobe", str(
            raised.exception))


class TensorMd5Test(unittest.TestCase):
    def output(self, tool: str, tmp: str, env: dict) -> tuple:
        dump = os.path.join(tmp, tool)
        run = subprocess.run([sys.executable, "-c", TENSOR_MD5_SCRIPT, tool,
                              dump], env=env, timeout=600, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stderr[-3000:])
        (rank,) = glob.glob(os.path.join(dump, "step0", "*"))
        with open(os.path.join(rank, "dump.json")) as f:
            entry = json.load(f)["data"]["Functional.linear.0.forward"]
        return rank, entry["output"][0]

    def test_tensor_task_writes_md5(self) -> None:
        tmp = fresh_dir("tp-tmd5-")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            rank, out = self.output("tprobe", tmp, daemon.env())
            reference = (self.output("msprobe", tmp, daemon.env())[1]
                         if HAS_MSPROBE else None)
        array = np.load(os.path.join(rank, "dump_tensor_data",
                                     out["data_name"]))
        self.assertEqual(out["md5"],
                         f"{zlib.crc32(array.tobytes()) & 0xffffffff:08x}")
        if reference is not None:
            self.assertEqual(out["md5"], reference["md5"])
            self.assertEqual(list(out), list(reference))


class DumpEnableTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-dumpen-")
        cls.daemon = Tprobed(tprobed_binary(), cls.tmp).__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def run_script(self, script: str, *args: str) -> str:
        run = subprocess.run([sys.executable, "-c", script, *args],
                             env=self.daemon.env(), timeout=600, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(run.returncode, 0, run.stdout[-3000:] +
                         run.stderr[-3000:])
        return run.stderr

    def steps(self, tool: str) -> list:
        dump = os.path.join(self.tmp, tool)
        config = os.path.join(self.tmp, f"{tool}.json")
        self.run_script(DUMP_ENABLE_SCRIPT, tool, config, dump)
        return sorted(d for d in os.listdir(dump) if d.startswith("step"))

    def test_same_steps_as_msprobe(self) -> None:
        tprobe = self.steps("tprobe")
        # msprobe 26.2 dumps step3, step4 and step5 (run here when it is
        # installed; this Python has no msprobe 26.x otherwise).
        expected = (self.steps("msprobe") if HAS_MSPROBE
                    else ["step3", "step4", "step5"])
        self.assertEqual(expected, ["step3", "step4", "step5"])
        self.assertEqual(tprobe, expected)
        with open(os.path.join(self.tmp, "tprobe", "step4", "rank",
                               "dump.json")) as f:
            self.assertIn("Functional.linear.0.forward", json.load(f)["data"])

    def tree(self, tool: str) -> list:
        """(step folder, its entry names, the first entry's first output's
        keys) for each step folder of CHANGED_FIELDS_SCRIPT's run."""
        dump = os.path.join(self.tmp, "fields-" + tool)
        self.run_script(CHANGED_FIELDS_SCRIPT, tool,
                        os.path.join(self.tmp, f"fields-{tool}.json"), dump)
        out = []
        for step in sorted(os.listdir(dump), key=lambda s: int(s[4:])):
            (path,) = glob.glob(os.path.join(dump, step, "*", "dump.json"))
            with open(path) as f:
                data = json.load(f)["data"]
            first = next(iter(data.values()))
            out.append((step, list(data), sorted(first["output"][0])))
        return out

    def test_other_changed_fields_apply_as_in_msprobe(self) -> None:
        tprobe = self.tree("tprobe")
        self.assertEqual([s for s, _, _ in tprobe],
                         ["step0", "step1", "step2", "step3", "step4",
                          "step6"])
        names = dict((s, n) for s, n, _ in tprobe)
        self.assertNotIn("Module.0.Linear.forward.0", names["step1"])
        self.assertIn("Module.0.Linear.forward.0", names["step2"])
        self.assertIn("Module.0.Linear.forward.0", names["step3"])
        self.assertNotIn("Functional.linear.0.backward", names["step4"])
        self.assertIn("md5", dict((s, k) for s, _, k in tprobe)["step4"])
        if HAS_MSPROBE:
            self.assertEqual(tprobe, self.tree("msprobe"))

    def moved_tree(self, tool: str) -> dict:
        """{folder: [(step folder, its level, its entry names)]} of
        MOVED_PATH_SCRIPT's run: the first dump_path ("") and the one it
        moves to ("-moved")."""
        dump = os.path.join(self.tmp, "moved-" + tool)
        self.run_script(MOVED_PATH_SCRIPT, tool,
                        os.path.join(self.tmp, f"moved-{tool}.json"), dump)
        out = {}
        for root in (dump, dump + "-moved"):
            steps = []
            for step in sorted(os.listdir(root)):
                (path,) = glob.glob(os.path.join(root, step, "*",
                                                 "dump.json"))
                with open(path) as f:
                    dump_json = json.load(f)
                steps.append((step, dump_json["level"],
                              list(dump_json["data"])))
            out[os.path.basename(root)[len("moved-" + tool):]] = steps
        return out

    def test_a_new_dump_path_takes_the_next_steps_as_in_msprobe(
            self) -> None:
        tprobe = self.moved_tree("tprobe")
        # Step 0 at L1 where it began, steps 1 and 2 at mix under the new
        # dump_path (the model was hooked at L1: mix adds no module entry,
        # in either tool).
        self.assertEqual([(s, level) for s, level, _ in tprobe[""]],
                         [("step0", "L1")])
        self.assertEqual([(s, level) for s, level, _ in tprobe["-moved"]],
                         [("step1", "mix"), ("step2", "mix")])
        self.assertIn("Functional.linear.0.forward", tprobe["-moved"][1][2])
        if HAS_MSPROBE:
            self.assertEqual(tprobe, self.moved_tree("msprobe"))

    def test_a_key_that_cannot_change_live_is_refused_with_a_warning(
            self) -> None:
        dump = os.path.join(self.tmp, "fixed")
        stderr = self.run_script(FIXED_KEY_SCRIPT,
                                 os.path.join(self.tmp, "fixed.json"), dump)
        self.assertIn("[tprobe] dump_enable: config.json's other changed "
                      "fields are not applied", stderr)
        self.assertIn("tprobe.ring_count cannot change while the training "
                      "runs", stderr)
        self.assertEqual(sorted(os.listdir(dump)),
                         ["step0", "step1", "step2"])
        with open(glob.glob(os.path.join(dump, "step2", "*",
                                         "dump.json"))[0]) as f:
            self.assertEqual([n for n in json.load(f)["data"]
                              if n.startswith("Module.")], [])

    def test_a_file_that_no_longer_parses_stops_dumping(self) -> None:
        dump = os.path.join(self.tmp, "broken")
        stderr = self.run_script(BROKEN_FILE_SCRIPT,
                                 os.path.join(self.tmp, "broken.json"), dump)
        self.assertIn("[tprobe] dump_enable: config.json no longer parses",
                      stderr)
        self.assertEqual(sorted(os.listdir(dump)), ["step0", "step1"])


if __name__ == "__main__":
    unittest.main()
