"""Modules whose inputs and outputs nest tensors in containers
(nested_model.py: nn.LSTM's ``(out, (h_n, c_n))``, nn.GRU, a module taking
``(x, [y])`` and returning ``{"a": (t1, [t2, mask, t3]), "n": Halves(t4,
Box(t5))}`` (a namedtuple, a plain dataclass), mixture-of-experts layers
returning their router logits in a tuple inside their output, an
auxiliary loss on them outside every module), under the
installed msprobe 26.x and under tprobe with the same config, 2 steps, at
L0 and mix, on this machine in this run. The trees must be the same: every
entry name in order, keys, every value (statistics within float32
rounding), construct.json parents (the auxiliary loss's backward calls
included), stack.json groups; tprobe's VF.lstm entries aside (ONLY_TPROBE).
msprobe lists a backward entry's tensors depth first through tuples, lists
and dicts, one item per tensor that needs a gradient, null where none
reached it.

The backward entries of the nested modules are also checked against
torch's own gradients of the same model and batch (torch.autograd.grad),
on every torch (the comparison with msprobe needs the project's virtual
environment: torch 2.13, mindstudio-probe 26.x).
"""

import importlib.util
import json
import os
import re
import subprocess
import sys
import unittest
from typing import Dict, List

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import golden_compare  # noqa: E402
import nested_model  # noqa: E402
from parity import rank_dir, write_config  # noqa: E402
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

HAVE_MSPROBE = importlib.util.find_spec("msprobe") is not None
# A difference from msprobe 26.2 (docs/msprobe-api.md): its API list names
# _VF.lstm, but it installs the wrapper where nn.LSTM does not look the
# function up (torch._VF.lstm stays torch's), so at mix it records no entry
# for nn.LSTM's call; tprobe records VF.lstm. These entries are taken out
# of tprobe's tree before the comparison (and must be there).
ONLY_TPROBE = re.compile(r"^VF\.lstm\.\d+\.(forward|backward)$")


def run_model(tool: str, config: str, out: str, env: dict) -> None:
    proc = subprocess.run(
        [sys.executable, nested_model.__file__, "--tool", tool, "--config",
         config, "--dump-path", out, "--steps", "2"],
        env=env, timeout=600, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"{tool} failed: {proc.stdout[-3000:]}")


def without_only_tprobe(my_dir: str) -> str:
    """A copy of the tree in ``my_dir`` without the ONLY_TPROBE entries
    (dump.json, construct.json, stack.json)."""
    out = my_dir + "-compared"
    os.makedirs(out)
    dump = golden_compare.load(my_dir, "dump.json")
    dump["data"] = {name: entry for name, entry in dump["data"].items()
                    if not ONLY_TPROBE.match(name)}
    construct = {name: parent for name, parent in
                 golden_compare.load(my_dir, "construct.json").items()
                 if not ONLY_TPROBE.match(name)}
    stack = {}
    for key, (names, lines) in golden_compare.load(my_dir,
                                                   "stack.json").items():
        names = [n for n in names if not ONLY_TPROBE.match(n)]
        if names:
            stack[key] = [names, lines]
    for name, value in (("dump.json", dump), ("construct.json", construct),
                        ("stack.json", stack)):
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            json.dump(value, f)
    return out


def true_gradients(step: int) -> Dict[str, Dict[str, list]]:
    """torch's gradients, without a tool, of the backward entries checked:
    entry name -> its input (the outputs' gradients) and output (the
    arguments' gradients through the module alone: Pair's x is a function
    of its y, so the vjp is taken of Pair run again on leaf copies; the
    tensor in Box, a plain dataclass, has no item, but its gradient flows
    through Pair to x and y)."""
    model = nested_model.build()
    seen = {}
    model.lstm.register_forward_hook(
        lambda _m, _a, out: seen.update(lstm=out))
    model.pair.register_forward_hook(
        lambda _m, args, out: seen.update(pair_in=args, pair=out))
    loss = nested_model.loss(model, nested_model.batch(step))
    out, (h_n, c_n) = seen["lstm"]
    (x, (y,)), = seen["pair_in"]
    t1, (t2, _mask, t3) = seen["pair"]["a"]
    t4, box = seen["pair"]["n"]
    grads = torch.autograd.grad(loss, [out, h_n, c_n, t1, t2, t3, t4,
                                       box.value],
                                allow_unused=True, retain_graph=True)
    x, y = (t.detach().requires_grad_() for t in (x, y))
    again = model.pair((x, [y]))
    through_pair = torch.autograd.grad(
        [again["a"][0], again["a"][1][0], again["n"].low,
         again["n"].high.value], [x, y],
        grad_outputs=[grads[3], grads[4], grads[6], grads[7]])
    return {"Module.lstm.LSTM.backward.0": {"input": list(grads[:3])},
            "Module.pair.Pair.backward.0": {"input": list(grads[3:7]),
                                            "output": list(through_pair)}}


def statistics(tensor: torch.Tensor) -> List[float]:
    t = tensor.double()
    return [t.max().item(), t.min().item(), t.mean().item(),
            t.norm().item()]


class NestedParityTest(unittest.TestCase):
    def trees(self, level: str, reference: bool = True) -> tuple:
        """(msprobe's dump path or None, tprobe's) for ``level``."""
        tmp = fresh_dir("tp-nested-")
        config = write_config(os.path.join(tmp, "config.json"),
                              {"task": "statistics", "level": level,
                               "rank": [], "step": []})
        ref = None
        if reference:
            ref = os.path.join(tmp, "msprobe")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            run_model("msprobe", config, ref, env)
        mine = os.path.join(tmp, "tprobe")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run_model("tprobe", config, mine, daemon.env())
            if daemon.stop() != 0:
                raise AssertionError("tprobed failed: " + daemon.log())
        return ref, mine

    def check_level(self, level: str) -> None:
        reference, mine = self.trees(level)
        for step in (0, 1):
            ref_dir = rank_dir(os.path.join(reference, f"step{step}"))
            my_dir = os.path.join(mine, f"step{step}", "rank")
            where = f"{level} step{step}"
            names = list(golden_compare.load(my_dir, "dump.json")["data"])
            extra = [n for n in names if ONLY_TPROBE.match(n)]
            self.assertEqual(
                extra, ["VF.lstm.0.forward", "VF.lstm.0.backward"]
                if level == "mix" else [], where)
            my_dir = without_only_tprobe(my_dir)
            self.assertEqual(golden_compare.compare_live_tree(ref_dir, my_dir),
                             [], where)
            ref = golden_compare.load(ref_dir, "dump.json")["data"]
            data = golden_compare.load(my_dir, "dump.json")["data"]
            # Every entry, the module backward ones included (which the
            # comparison above matches by name only), in msprobe's order.
            self.assertEqual(list(data), list(ref), where)
            self.assertEqual(golden_compare.load(my_dir, "construct.json"),
                             golden_compare.load(ref_dir, "construct.json"),
                             where)
            # What the comparison stands on, named: it must not pass
            # because both trees lack these.
            lstm = data["Module.lstm.LSTM.backward.0"]["input"]
            self.assertEqual(len(lstm), 3, "out, h_n and c_n")
            self.assertIsNone(lstm[2], "no gradient reaches c_n")
            pair = data["Module.pair.Pair.backward.0"]
            self.assertEqual(len(pair["input"]), 4,
                             "t1, t2, t3, the namedtuple's low: no mask, "
                             "nothing from the dataclass")
            self.assertIsNone(pair["input"][2])
            self.assertEqual(len(pair["output"]), 2, "x and y of (x, [y])")
            self.assertEqual(
                len(data["Module.layers.0.Layer.backward.0"]["input"]), 2,
                "the hidden state and the router logits")

    def check_true_gradients(self, data: dict, step: int,
                             where: str) -> None:
        for name, sides in true_gradients(step).items():
            for side, grads in sides.items():
                dumped = data[name][side]
                self.assertEqual(len(dumped), len(grads), f"{name} {side}")
                for i, (entry, grad) in enumerate(zip(dumped, grads)):
                    label = f"{where} {name}.{side}[{i}]"
                    if grad is None:
                        self.assertIsNone(entry, label)
                        continue
                    self.assertEqual(entry["shape"], list(grad.shape), label)
                    for key, value in zip(("Max", "Min", "Mean", "Norm"),
                                          statistics(grad)):
                        self.assertAlmostEqual(
                            entry[key], value,
                            delta=1e-5 * max(1.0, abs(value)),
                            msg=f"{label} {key}")

    @unittest.skipUnless(HAVE_MSPROBE, "needs mindstudio-probe 26.x (the "
                         "project's virtual environment)")
    def test_l0(self) -> None:
        self.check_level("L0")

    @unittest.skipUnless(HAVE_MSPROBE, "needs mindstudio-probe 26.x (the "
                         "project's virtual environment)")
    def test_mix(self) -> None:
        self.check_level("mix")

    def test_backward_entries_hold_torchs_gradients(self) -> None:
        """tprobe alone (PyTorch 1.13 too, where msprobe writes no module
        backward entry)."""
        _, mine = self.trees("L0", reference=False)
        for step in (0, 1):
            data = golden_compare.load(
                os.path.join(mine, f"step{step}", "rank"), "dump.json")
            self.check_true_gradients(data["data"], step, f"step{step}")


if __name__ == "__main__":
    unittest.main()
