"""Third-party models against the installed msprobe 26.x: HuggingFace
transformers' GPT2LMHeadModel (a causal LM, its own loss), BertModel with
a padded attention mask and T5ForConditionalGeneration (an encoder-decoder),
built from small configs with random weights, a ResNet-style CNN with
BatchNorm and in-place ReLU, and GPT-2 under DistributedDataParallel and
under FSDP2 (fully_shard) on 2 ranks (torchrun, gloo), all in hf_model.py:
2 training steps under msprobe and under tprobe with the same config, at
L0, L1 and mix, on this machine in this run. The trees must agree, rank by
rank: entry names in order, keys, every value (statistics within float32
rounding), construct.json parents and stack.json groups.

DELIBERATE lists the differences that are kept, each with its evidence:
where msprobe is wrong and tprobe is kept, and where the value is arbitrary
in any tool (FSDP2's unfilled all-gather buffer); a difference outside it
fails, and so does an entry of it that no longer occurs anywhere.
transformers is pinned in deploy/requirements.txt; without it (or without
msprobe) the test is skipped, saying so."""

import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import golden_compare  # noqa: E402
import hf_model  # noqa: E402
from parity import rank_dir, write_config  # noqa: E402
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

MODEL = os.path.join(HERE,
                     "hf_model.py")
READY = all(importlib.util.find_spec(m) for m in ("msprobe", "transformers"))
FLT_MIN = 1.1754943508222875e-38

# (pattern of a difference, why tprobe's value is kept).
DELIBERATE = [
    (r"\.Norm: (\S+) not within float32 rounding of golden (\S+)$",
     "msprobe's Norm is torch's float32 reduction: where the squares of the "
     "elements are below FLT_MIN they are subnormal and lose precision, "
     "while tprobe accumulates in double. It shows on BERT's attention key "
     "bias: softmax is invariant to it, so its gradient is rounding noise "
     "(~1e-21) and so are its values after one SGD step. Accepted only when "
     "Norm^2 < FLT_MIN and the two agree to 1 %"),
    (r"^step(\d): (?:rank\d: )?Functional\.relu\.(\d+)\.backward"
     r"\.output\[0\]\.(Max|Min|Mean|Norm): (\S+) "
     r"(?:!=|not within float32 rounding of) golden \S+$",
     "At mix, msprobe writes the gradient an in-place ReLU received "
     "(backward input) as the gradient of its input (backward output) too, "
     "unmasked: the two are equal in its dump. tprobe's value is the "
     "gradient autograd gives the ReLU's input (hf_model."
     "relu_input_gradients, on the same seeded model with out-of-place "
     "ReLUs); accepted only when tprobe's statistic equals that truth"),
    (r"^step\d: (?:rank\d: )?construct\.json: (\S+) "
     r"(?:missing|-> \S+, golden -> '(\S+)')$",
     "A ReLU(inplace=True) module has no backward entry in either tool (its "
     "output is overwritten in place, which module backward hooks cannot "
     "see). msprobe still makes a construct.json node for it, one that its "
     "own dump.json does not hold, and parents the Conv2d, BatchNorm2d and "
     "API backward calls before it under that node, though they run "
     "outside it. Accepted only when the node missing, or msprobe's parent, "
     "is a ReLU backward node absent from msprobe's dump.json"),
    (r"^step(\d): rank(\d): Tensor\.narrow\.(\d+)\.forward\."
     r"(?:input_args\[0\]|output\[0\])\.(?:Max|Min|Mean|Norm): \S+ "
     r"(?:!=|not within float32 rounding of) golden \S+$",
     "Under FSDP2, the all-gather narrows its output buffer to this rank's "
     "slice before anything is written to it: the buffer is memory from "
     "torch.empty, so the statistics of the narrow's input and output are "
     "whatever that memory held, in any tool and any run. Accepted only "
     "for the statistics (type, dtype, shape and requires_grad must match) "
     "of the narrow calls that hf_model.AllGatherWatch, in a run with no "
     "tool, sees narrow the very tensor torch.empty returned before "
     "dist.all_gather_single fills it; the test fails if it sees none"),
]


def subnormal_norm(error: str) -> bool:
    match = re.search(DELIBERATE[0][0], error)
    if not match:
        return False
    mine, golden = float(match.group(1)), float(match.group(2))
    return (golden * golden < FLT_MIN and
            math.isclose(mine, golden, rel_tol=0.01))


def true_relu_gradient(error: str, truth: list) -> bool:
    match = re.search(DELIBERATE[1][0], error)
    if not match:
        return False
    step, call, stat = int(match.group(1)), int(match.group(2)), \
        match.group(3)
    grad = truth[step][call].double()
    expected = {"Max": grad.max(), "Min": grad.min(), "Mean": grad.mean(),
                "Norm": grad.norm()}[stat].item()
    return math.isclose(float(match.group(4)), expected, rel_tol=1e-5,
                        abs_tol=1e-12)


def phantom_relu_node(error: str, reference_entries: dict) -> bool:
    match = re.search(DELIBERATE[2][0], error)
    if not match:
        return False
    step = int(error[4])
    node = match.group(2) or match.group(1)
    return (".ReLU.backward." in node and
            node not in reference_entries[step])


def two_ranks(model: str) -> bool:
    return model.startswith(("ddp-", "fsdp-"))


def unfilled_buffer(error: str, unfilled: dict) -> bool:
    match = re.search(DELIBERATE[3][0], error)
    if not match:
        return False
    step, rank, call = (int(g) for g in match.groups())
    calls = unfilled.get((step, rank), [])
    return call < len(calls) and calls[call]


def run_model(model: str, tool: str, config: str, out: str,
              env: dict) -> None:
    # A ddp- or fsdp- model runs as 2 ranks under torchrun (torchrun_test.py
    # says why the redirects are set).
    launcher = [sys.executable]
    if two_ranks(model):
        launcher += ["-m", "torch.distributed.run", "--standalone",
                     "--nproc_per_node=2", "--redirects", "2", "--tee", "2"]

    def run() -> subprocess.CompletedProcess:
        return subprocess.run(
            launcher + [MODEL, "--model", model, "--tool", tool, "--config",
                        config, "--dump-path", out, "--steps", "2"],
            env=dict(env, OMP_NUM_THREADS="1"), cwd=os.path.dirname(out),
            timeout=600, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
    proc = run()
    # Once, in a CI run under a load near 5, rank 0 of the 2-rank FSDP
    # model aborted at mix with this line (2026-12-05); seven reruns, two
    # at a time, passed, and its cause is not found yet. Rerun once, and
    # say so on stderr, rather than lose the suite to it; a second abort
    # fails.
    if (proc.returncode != 0 and two_ranks(model) and
            "terminate called without an active exception" in proc.stdout):
        print(f"\n{tool} {model}: a rank aborted (terminate called without "
              "an active exception); running it once more", file=sys.stderr)
        shutil.rmtree(out, ignore_errors=True)
        proc = run()
    if proc.returncode != 0:
        raise AssertionError(f"{tool} {model} failed: {proc.stdout[-3000:]}")


@unittest.skipUnless(READY, "needs mindstudio-probe 26.x and transformers "
                     "(the project's virtual environment)")
class HfParityTest(unittest.TestCase):
    def differences(self, model: str, level: str) -> list:
        tmp = fresh_dir(f"tp-hf-{model}-{level}-")
        config = write_config(os.path.join(tmp, "config.json"), {
            "task": "statistics", "level": level, "rank": [], "step": []})
        reference = os.path.join(tmp, "msprobe")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run_model(model, "msprobe", config, reference, env)
        mine = os.path.join(tmp, "tprobe")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            run_model(model, "tprobe", config, mine, daemon.env())
            if daemon.stop() != 0:
                raise AssertionError("tprobed failed: " + daemon.log())
        self.unfilled = {}
        if model.startswith("fsdp-") and level != "L0":
            self.unfilled = self.unfilled_narrows(model, config, reference,
                                                  os.path.join(tmp, "none"),
                                                  env)
        errors = []
        self.reference_entries = {}
        ranks = ["rank0", "rank1"] if two_ranks(model) else [None]
        for step in (0, 1):
            for rank in ranks:
                step_dir = os.path.join(reference, f"step{step}")
                ref_dir = (os.path.join(step_dir, rank) if rank
                           else rank_dir(step_dir))
                my_dir = os.path.join(mine, f"step{step}", rank or "rank")
                data = golden_compare.load(my_dir, "dump.json")
                self.assertGreater(len(data["data"]), 20, f"step{step}")
                self.reference_entries.setdefault(step, {}).update(
                    golden_compare.load(ref_dir, "dump.json")["data"])
                where = f"step{step}: " + (f"{rank}: " if rank else "")
                errors += [where + e for e in
                           golden_compare.compare_live_tree(ref_dir, my_dir)]
        return errors

    def unfilled_narrows(self, model: str, config: str, reference: str,
                         out: str, env: dict) -> dict:
        """{(step, rank): [whether Tensor.narrow call N narrows an unfilled
        all-gather buffer]} from a run with no tool (AllGatherWatch). Fails
        unless each step of each rank has such a call and msprobe's tree
        has exactly that step's narrow calls, Tensor.narrow.0.forward on,
        so that the call numbers name the same calls."""
        run_model(model, "none", config, out, env)
        unfilled = {}
        for rank in (0, 1):
            steps = golden_compare.load(out, f"rank{rank}.json")
            self.assertEqual(len(steps), 2)
            for step, calls in enumerate(steps):
                self.assertIn(True, calls, f"step{step} rank{rank}")
                data = golden_compare.load(
                    os.path.join(reference, f"step{step}", f"rank{rank}"),
                    "dump.json")["data"]
                self.assertEqual(
                    [n for n in data if n.startswith("Tensor.narrow.")],
                    [f"Tensor.narrow.{n}.forward" for n in range(len(calls))])
                unfilled[(step, rank)] = calls
        return unfilled

    def check(self, model: str, level: str) -> dict:
        """Fails on any difference but the deliberate ones; returns how
        many of each of those there were, by rule."""
        errors = self.differences(model, level)
        truth = hf_model.relu_input_gradients(2) if model == "cnn" else []
        rules = {
            "subnormal_norm": subnormal_norm,
            "true_relu_gradient": lambda e: true_relu_gradient(e, truth),
            "phantom_relu_node":
                lambda e: phantom_relu_node(e, self.reference_entries),
            "unfilled_buffer":
                lambda e: unfilled_buffer(e, self.unfilled),
        }
        seen = {name: 0 for name in rules}
        unexplained = []
        for error in errors:
            rule = next((n for n, r in rules.items() if r(error)), None)
            if rule is None:
                unexplained.append(error)
            else:
                seen[rule] += 1
        self.assertEqual(unexplained, [], f"{model} {level}")
        return seen

    def test_gpt2_l0(self) -> None:
        self.check("gpt2", "L0")

    def test_gpt2_l1(self) -> None:
        self.check("gpt2", "L1")

    def test_gpt2_mix(self) -> None:
        self.check("gpt2", "mix")

    def test_bert_l0(self) -> None:
        # The deliberate difference occurs here (step 1, the key biases):
        # if it no longer does, DELIBERATE is stale.
        self.assertGreater(self.check("bert", "L0")["subnormal_norm"], 0)

    def test_bert_l1(self) -> None:
        self.check("bert", "L1")

    def test_bert_mix(self) -> None:
        self.check("bert", "mix")

    def test_t5_l0(self) -> None:
        self.check("t5", "L0")

    def test_t5_l1(self) -> None:
        self.check("t5", "L1")

    def test_t5_mix(self) -> None:
        self.check("t5", "mix")

    def test_ddp_gpt2_l0(self) -> None:
        self.check("ddp-gpt2", "L0")

    def test_ddp_gpt2_l1(self) -> None:
        self.check("ddp-gpt2", "L1")

    def test_ddp_gpt2_mix(self) -> None:
        self.check("ddp-gpt2", "mix")

    def test_fsdp_gpt2_l0(self) -> None:
        self.check("fsdp-gpt2", "L0")

    def test_fsdp_gpt2_l1(self) -> None:
        self.check("fsdp-gpt2", "L1")

    def test_fsdp_gpt2_mix(self) -> None:
        self.check("fsdp-gpt2", "mix")

    def test_cnn_l0(self) -> None:
        self.assertGreater(self.check("cnn", "L0")["phantom_relu_node"], 0)

    def test_cnn_l1(self) -> None:
        self.check("cnn", "L1")

    def test_cnn_mix(self) -> None:
        seen = self.check("cnn", "mix")
        self.assertGreater(seen["phantom_relu_node"], 0)
        self.assertGreater(seen["true_relu_gradient"], 0)


if __name__ == "__main__":
    unittest.main()
