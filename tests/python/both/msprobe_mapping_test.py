"""`tprobe compare`'s msprobe mapping options against msprobe 26.2's
`msprobe compare -cm/-am/-dm`, run live on the same pair of trees and the
same mapping files. msprobe's CLI (`msprobe compare -tp -gp -o` and the
flag) runs once per mapping, all in one Python process, so its imports are
paid once.

mapping_model.py dumps one network under tprobe twice, in MindSpore (the
target) and in PyTorch (the baseline). For each mapping both tools compare
the two trees; the (NPU Name, Bench Name) pairs of the rows both names
fill must be the same set, and not empty:
- --cell-mapping / -cm: "Cell.fc1.Dense" against "Module.fc1.Linear";
- --api-mapping / -am: "Mint.tanh" against "Torch.tanh",
  "MintFunctional.relu" against "Functional.relu", and by msprobe's
  built-in table "Functional.square" (in MindSpore's MSELoss) against
  "Torch.square" (forward only in the PyTorch network);
- --api-mapping FILE / -am FILE: the same, and an api_mapping.yaml that
  maps MindSpore's "Tensor.__sub__" (pred - y in MSELoss) to PyTorch's
  "Functional.mse_loss" with its two arguments swapped and its first
  output kept: the other rows of __sub__ pair with nothing;
- --data-mapping / -dm: three whole row names;
- --layer-mapping / -lm: the layers of both trees, with "Dense: {MatMul:
  linear}", so that the MatMul inside MindSpore's Dense pairs with the
  functional linear inside PyTorch's Linear, which only the mapping does;
  without stack.json and construct.json both compare plainly.
Every pair is Float32 against torch.float32, one family across frameworks,
so both tools judge it as a pair: each row's Result and Err_message must be
msprobe's too (msprobe's dtype check reads the names, so they are errors).
Without a mapping neither tool pairs a row.

msprobe's built-in -am table (msprobe/core/compare/ms_to_pt_api.yaml) is
also tprobe's data (tools/compare/msprobe/ms_to_pt_api.cc): the pairs in that
source must be the installed msprobe's yaml, line for line, so that a new
msprobe release that changes the table fails here.
"""

import csv
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import unittest
from typing import Dict, List, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from old_stack_trees import write_pair  # noqa: E402
from tprobed_fixture import Tprobed, fresh_dir, tprobed_binary  # noqa: E402

HAVE_ALL = all(importlib.util.find_spec(m) is not None
               for m in ("msprobe", "mindspore", "torch"))
MODEL = os.path.join(HERE, "mapping_model.py")
TABLE_SOURCE = os.path.join(HERE, os.pardir, os.pardir, os.pardir, "tools",
                            "compare", "msprobe", "ms_to_pt_api.cc")
CELL_MAPPING = "fc1.Dense: fc1.Linear\nDense: Linear\n"
DATA_MAPPING = (
    "Cell.fc1.Dense.forward.0.input.0: Module.fc1.Linear.forward.0.input.0\n"
    "Mint.tanh.0.forward.output.0: Torch.tanh.0.forward.output.0\n"
    "Cell.fc2.Dense.forward.0.output.0: "
    "Module.fc2.Linear.forward.0.output.0\n")
# msprobe's api_mapping.yaml: MindSpore's input 0 is PyTorch's input 1.
API_MAPPING = """\
# pred - y against mse_loss(pred, y), arguments swapped
- ms_api: Tensor.__sub__
  pt_api: Functional.mse_loss
  ms_args: [0, 1]
  pt_args:
    - 1
    - 0
  ms_output: [0]
  pt_output: [0]
"""
SWAPPED_PAIRS = {
    ("Tensor.__sub__.0.forward.input.0",
     "Functional.mse_loss.0.forward.input.1"),
    ("Tensor.__sub__.0.forward.input.1",
     "Functional.mse_loss.0.forward.input.0"),
    ("Tensor.__sub__.0.backward.output.0",
     "Functional.mse_loss.0.backward.output.0")}
# "Cell" is the top layer; a value's text from "(" on is dropped.
LAYER_MAPPING = "Cell:\n  fc2: fc2(Linear)\nDense:\n  MatMul: linear\n"
LAYER_MAPPING_PLAIN = "Cell:\n  fc2: fc2(Linear)\n"
MATMUL_PAIR = ("Primitive.matmul.MatMul.0.forward.input.0",
               "Functional.linear.0.forward.input.0")
Pairs = Set[Tuple[str, str]]
# msprobe's command line, run for each argv of a JSON list.
MSPROBE_CLI = """
import json, sys
from msprobe.msprobe import main
for argv in json.loads(sys.argv[1]):
    sys.argv = ["msprobe", *argv]
    try:
        main()
    except SystemExit as e:
        if e.code:
            raise
"""


def tprobe_cli() -> str:
    return os.environ.get("TPROBE_CLI") or "tprobe"


def verdicts_of(csv_path: str) -> Dict[Tuple[str, str], Tuple[str, str]]:
    """(Result, Err_message) of each row both names fill, by its pair."""
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows: List[Dict[str, str]] = list(csv.DictReader(f))
    return {(r["NPU Name"], r["Bench Name"]): (r["Result"], r["Err_message"])
            for r in rows
            if r["NPU Name"] != "N/A" and r["Bench Name"] != "N/A"}


def pairs_of(csv_path: str) -> Pairs:
    return set(verdicts_of(csv_path))


@unittest.skipUnless(HAVE_ALL, "needs msprobe, MindSpore and torch")
class MsprobeMappingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-msmap-")
        with Tprobed(tprobed_binary(), fresh_dir("tp-msmap-d-")) as daemon:
            for framework in ("mindspore", "pytorch"):
                run = subprocess.run(
                    [sys.executable, MODEL, "--framework", framework,
                     "--dump-path", os.path.join(cls.tmp, framework)],
                    env=dict(daemon.env(), GLOG_v="3"), capture_output=True,
                    text=True, timeout=600)
                assert run.returncode == 0, run.stderr[-4000:]
            assert daemon.stop() == 0, daemon.log()
        cls.target = os.path.join(cls.tmp, "mindspore", "step0")
        cls.baseline = os.path.join(cls.tmp, "pytorch", "step0")
        # The target without its layers: -lm falls back to a plain compare.
        cls.bare = os.path.join(cls.tmp, "bare", "step0")
        shutil.copytree(cls.target, cls.bare)
        for rank in glob.glob(os.path.join(cls.bare, "rank*")):
            for name in ("stack.json", "construct.json"):
                os.remove(os.path.join(rank, name))
        cls.files = {}
        for name, text in (("cell.yaml", CELL_MAPPING),
                           ("data.yaml", DATA_MAPPING),
                           ("api.yaml", API_MAPPING),
                           ("layer.yaml", LAYER_MAPPING),
                           ("layer-plain.yaml", LAYER_MAPPING_PLAIN)):
            cls.files[name] = os.path.join(cls.tmp, name)
            with open(cls.files[name], "w", encoding="utf-8") as f:
                f.write(text)
        cls.msprobe_flags = {
            "cell": ["-cm", cls.files["cell.yaml"]], "api": ["-am"],
            "api-file": ["-am", cls.files["api.yaml"]],
            "data": ["-dm", cls.files["data.yaml"]],
            "layer": ["-lm", cls.files["layer.yaml"]], "none": []}
        argvs = [["compare", "-tp", cls.target, "-gp", cls.baseline, "-o",
                  os.path.join(cls.tmp, "msprobe-" + label), *flags]
                 for label, flags in cls.msprobe_flags.items()]
        argvs.append(["compare", "-tp", cls.bare, "-gp", cls.baseline, "-o",
                      os.path.join(cls.tmp, "msprobe-layer-bare"), "-lm",
                      cls.files["layer.yaml"]])
        cls.msprobe_log = subprocess.run(
            [sys.executable, "-c", MSPROBE_CLI, json.dumps(argvs)],
            timeout=600, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT).stdout

    def msprobe_csv(self, label: str) -> str:
        """The CSV of msprobe's run for `label` (setUpClass ran it)."""
        files = glob.glob(os.path.join(self.tmp, "msprobe-" + label,
                                       "compare_result_*.csv"))
        self.assertEqual(len(files), 1, self.msprobe_log[-4000:])
        return files[0]

    def msprobe(self, label: str) -> Pairs:
        return pairs_of(self.msprobe_csv(label))

    def tprobe_csv(self, label: str, *flags: str, target: str = "") -> str:
        out = os.path.join(self.tmp, "tprobe-" + label)
        run = subprocess.run(
            [tprobe_cli(), "compare", target or self.target, self.baseline,
             "-o", out, *flags], timeout=600, text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        files = glob.glob(os.path.join(out, "compare_result*.csv"))
        self.assertIn(run.returncode, (0, 4), run.stdout[-4000:])
        self.assertEqual(len(files), 1, run.stdout[-4000:])
        return files[0]

    def tprobe(self, label: str, *flags: str) -> Pairs:
        return pairs_of(self.tprobe_csv(label, *flags))

    def assert_same_pairs(self, label: str, tprobe_flags: List[str],
                          at_least: int) -> None:
        theirs = verdicts_of(self.msprobe_csv(label))
        mine = verdicts_of(self.tprobe_csv(label, *tprobe_flags))
        self.assertEqual(sorted(mine.keys() - theirs.keys()), [],
                         "paired by tprobe only")
        self.assertEqual(sorted(theirs.keys() - mine.keys()), [],
                         "paired by msprobe only")
        for pair, verdict in mine.items():
            self.assertEqual(verdict, theirs[pair], pair)
        self.assertGreaterEqual(len(mine), at_least, sorted(mine))
        print(f"{label}: {len(mine)} pairs, the same as msprobe's",
              file=sys.stderr)

    def test_cell_mapping_pairs_as_msprobes(self) -> None:
        # fc1 and fc2: forward input, weight, bias, output; backward;
        # parameters_grad.
        self.assert_same_pairs(
            "cell", ["--cell-mapping", self.files["cell.yaml"]], 15)

    def test_api_mapping_pairs_as_msprobes(self) -> None:
        mine = self.tprobe("api-check", "--api-mapping")
        self.assertIn(("Mint.tanh.0.forward.input.0",
                       "Torch.tanh.0.forward.input.0"), mine)
        self.assertIn(("MintFunctional.relu.0.backward.output.0",
                       "Functional.relu.0.backward.output.0"), mine)
        self.assertIn(("Functional.square.0.forward.output.0",
                       "Torch.square.0.forward.output.0"), mine)
        self.assert_same_pairs("api", ["--api-mapping"], 10)

    def test_api_mapping_file_pairs_as_msprobes(self) -> None:
        theirs = verdicts_of(self.msprobe_csv("api-file"))
        flags = {"api-file": ["--api-mapping", self.files["api.yaml"]],
                 "api-file-eq": ["--api-mapping=" + self.files["api.yaml"]]}
        for label, tprobe_flags in flags.items():
            mine = verdicts_of(self.tprobe_csv(label, *tprobe_flags))
            self.assertEqual(sorted(mine.keys() - theirs.keys()), [],
                             "paired by tprobe only")
            self.assertEqual(sorted(theirs.keys() - mine.keys()), [],
                             "paired by msprobe only")
            # The forward output is [4, 2] against mse_loss's scalar: where
            # shapes differ msprobe lists its per-check errors and tprobe
            # names the shapes.
            for pair, verdict in mine.items():
                if "shape of NPU and Bench" in theirs[pair][1]:
                    self.assertEqual(verdict[0], theirs[pair][0], pair)
                else:
                    self.assertEqual(verdict, theirs[pair], pair)
        # The swapped arguments, the kept output; the built-in mapping
        # still pairs tanh, relu and square; __sub__'s unlisted rows pair
        # nothing.
        self.assertLessEqual(SWAPPED_PAIRS, set(mine))
        self.assertIn(("Tensor.__sub__.0.forward.output.0",
                       "Functional.mse_loss.0.forward.output.0"), mine)
        self.assertEqual(set(mine) - SWAPPED_PAIRS - {
            ("Tensor.__sub__.0.forward.output.0",
             "Functional.mse_loss.0.forward.output.0")},
            self.msprobe("api"))
        print(f"api-file: {len(mine)} pairs, the same as msprobe's",
              file=sys.stderr)

    def test_a_bad_api_mapping_names_the_file_and_line(self) -> None:
        bad = os.path.join(self.tmp, "bad-api.yaml")
        with open(bad, "w", encoding="utf-8") as f:
            f.write("- ms_api: Tensor.__sub__\n  pt_api: Functional.mse_loss\n"
                    "  ms_args: [0, 1]\n  pt_args: [1]\n")
        run = subprocess.run(
            [tprobe_cli(), "compare", self.target, self.baseline, "-o",
             os.path.join(self.tmp, "bad"), "--api-mapping", bad],
            timeout=60, text=True, capture_output=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn(bad + ":1: ms_args and pt_args must list as many "
                      "places (2 and 1)", run.stderr)

    def test_data_mapping_pairs_as_msprobes(self) -> None:
        self.assert_same_pairs(
            "data", ["--data-mapping", self.files["data.yaml"]], 3)

    def test_layer_mapping_pairs_as_msprobes(self) -> None:
        theirs = verdicts_of(self.msprobe_csv("layer"))
        mine = verdicts_of(self.tprobe_csv(
            "layer", "--layer-mapping", self.files["layer.yaml"]))
        self.assertEqual(sorted(mine.keys() - theirs.keys()), [],
                         "paired by tprobe only")
        self.assertEqual(sorted(theirs.keys() - mine.keys()), [],
                         "paired by msprobe only")
        # Cells, parameters_grad, tanh, relu and square by their layers; MatMul
        # with linear by the rule (its backward as msprobe renumbers the
        # baseline's backward calls: fc1's MatMul with fc2's linear).
        self.assertIn(MATMUL_PAIR, mine)
        self.assertIn(("Cell.fc2.Dense.parameters_grad.0.weight",
                       "Module.fc2.Linear.parameters_grad.0.weight"), mine)
        self.assertIn(("Primitive.matmul.MatMul.0.backward.input.0",
                       "Functional.linear.1.backward.input.0"), mine)
        self.assertGreaterEqual(len(mine), 30, sorted(mine))
        # Verdicts as msprobe's, but for pairs of different shapes, where
        # msprobe lists its per-check errors and tprobe names the shapes.
        for pair, verdict in mine.items():
            if "shape of NPU and Bench" in theirs[pair][1]:
                self.assertEqual(verdict[0], theirs[pair][0], pair)
            else:
                self.assertEqual(verdict, theirs[pair], pair)
        plain = self.tprobe("layer-plain", "--layer-mapping",
                            self.files["layer-plain.yaml"])
        self.assertNotIn(MATMUL_PAIR, plain)
        self.assertEqual(plain, {p for p in mine if "MatMul" not in p[0]})

    def test_layer_mapping_without_layers_is_a_plain_compare(self) -> None:
        theirs = self.msprobe_csv("layer-bare")
        mine = self.tprobe_csv("layer-bare", "--layer-mapping",
                               self.files["layer.yaml"], target=self.bare)
        self.assertEqual(verdicts_of(mine), verdicts_of(theirs))
        self.assertEqual(pairs_of(mine), set())

    def test_a_bad_layer_mapping_names_the_file_and_line(self) -> None:
        bad = os.path.join(self.tmp, "bad-layer.yaml")
        with open(bad, "w", encoding="utf-8") as f:
            f.write("Dense:\n  MatMul linear\n")
        run = subprocess.run(
            [tprobe_cli(), "compare", self.target, self.baseline, "-o",
             os.path.join(self.tmp, "bad"), "--layer-mapping", bad],
            timeout=60, text=True, capture_output=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn(bad + ":2: expected 'child path: new name'",
                      run.stderr)

    def test_without_a_mapping_nothing_pairs(self) -> None:
        self.assert_same_pairs("none", [], 0)
        self.assertEqual(self.msprobe("none"), set())

    def test_two_msprobe_mappings_are_refused(self) -> None:
        run = subprocess.run(
            [tprobe_cli(), "compare", self.target, self.baseline, "-o",
             os.path.join(self.tmp, "refused"), "--api-mapping",
             "--cell-mapping", self.files["cell.yaml"]],
            timeout=60, text=True, capture_output=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("exclude each other", run.stderr)
        run = subprocess.run(
            [tprobe_cli(), "compare", self.target, self.baseline, "-o",
             os.path.join(self.tmp, "refused"), "--data-mapping",
             self.files["data.yaml"], "--layer-mapping",
             self.files["layer.yaml"]],
            timeout=60, text=True, capture_output=True)
        self.assertEqual(run.returncode, 2)
        self.assertIn("exclude each other", run.stderr)


@unittest.skipUnless(HAVE_ALL, "needs msprobe, MindSpore and torch")
class KeyedStackLayerMappingTest(unittest.TestCase):
    """--layer-mapping on trees whose stack.json has 8.x's form, {entry:
    [line, ...]} (old_stack_trees.py, shaped as msprobe's own fixture),
    against msprobe compare -lm live: an API's scope takes the framework
    function that called it from those lines, so MindSpore's
    Tensor.__add__.1 (user code) pairs with PyTorch's Tensor.__add__.0 and
    MindSpore's __add__.0 (called by Tensor.__getitem__) with nothing. The
    same trees with 26.x's indexed stack.json pair the calls by number, in
    both tools."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-keyedstack-")
        cls.trees = {form: write_pair(os.path.join(cls.tmp, form), form)
                     for form in ("named", "indexed")}
        cls.layer = os.path.join(cls.tmp, "layer.yaml")
        with open(cls.layer, "w", encoding="utf-8") as f:
            f.write("Cell:\n  block: block(Block)\n")
        argvs = [["compare", "-tp", target, "-gp", baseline, "-o",
                  os.path.join(cls.tmp, "msprobe-" + form), "-lm", cls.layer]
                 for form, (target, baseline) in cls.trees.items()]
        cls.msprobe_log = subprocess.run(
            [sys.executable, "-c", MSPROBE_CLI, json.dumps(argvs)],
            timeout=600, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT).stdout

    def verdicts(self, form: str) -> Tuple[Dict, Dict]:
        """msprobe's and tprobe's verdicts by pair, for the trees of
        `form`."""
        files = glob.glob(os.path.join(self.tmp, "msprobe-" + form,
                                       "compare_result_*.csv"))
        self.assertEqual(len(files), 1, self.msprobe_log[-4000:])
        target, baseline = self.trees[form]
        out = os.path.join(self.tmp, "tprobe-" + form)
        run = subprocess.run(
            [tprobe_cli(), "compare", target, baseline, "-o", out,
             "--layer-mapping", self.layer], timeout=600, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertIn(run.returncode, (0, 4), run.stdout[-4000:])
        [mine] = glob.glob(os.path.join(out, "compare_result*.csv"))
        return verdicts_of(files[0]), verdicts_of(mine)

    def assert_same(self, theirs: Dict, mine: Dict) -> None:
        self.assertEqual(sorted(mine.keys() - theirs.keys()), [],
                         "paired by tprobe only")
        self.assertEqual(sorted(theirs.keys() - mine.keys()), [],
                         "paired by msprobe only")
        for pair, verdict in mine.items():
            self.assertEqual(verdict, theirs[pair], pair)

    def test_keyed_stack_lines_scope_apis_as_msprobes(self) -> None:
        theirs, mine = self.verdicts("named")
        self.assert_same(theirs, mine)
        self.assertIn(("Tensor.__add__.1.forward.input.0",
                       "Tensor.__add__.0.forward.input.0"), mine)
        self.assertEqual([p for p in mine
                          if p[0].startswith("Tensor.__add__.0.")], [])
        # Under the framework's norm on both sides, inside the block.
        self.assertIn(("Tensor.__mul__.0.forward.input.0",
                       "Tensor.__mul__.0.forward.input.0"), mine)
        self.assertIn(("Tensor.__add__.2.forward.output.0",
                       "Tensor.__add__.2.forward.output.0"), mine)
        self.assertGreaterEqual(len(mine), 20, sorted(mine))
        print(f"keyed stack.json: {len(mine)} pairs, the same as msprobe's",
              file=sys.stderr)

    def test_indexed_stack_json_pairs_calls_by_number(self) -> None:
        theirs, mine = self.verdicts("indexed")
        self.assert_same(theirs, mine)
        self.assertIn(("Tensor.__add__.0.forward.input.0",
                       "Tensor.__add__.0.forward.input.0"), mine)
        self.assertIn(("Tensor.__add__.1.forward.input.0",
                       "Tensor.__add__.1.forward.input.0"), mine)


@unittest.skipUnless(importlib.util.find_spec("msprobe") is not None,
                     "needs msprobe")
class MsToPtApiTableTest(unittest.TestCase):
    def test_the_table_is_msprobes_yaml_line_for_line(self) -> None:
        import yaml
        spec = importlib.util.find_spec("msprobe")
        assert spec is not None and spec.origin is not None
        path = os.path.join(os.path.dirname(spec.origin), "core", "compare",
                            "ms_to_pt_api.yaml")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        theirs = [tuple(line.split(": ")) for line in text.splitlines()]
        # The lines are plain "MsName: PtName", as msprobe's yaml loader
        # reads them.
        self.assertEqual(dict(theirs), yaml.safe_load(text))
        with open(TABLE_SOURCE, encoding="utf-8") as f:
            mine = re.findall(r'std::pair\{"([^"]*)"sv,\s*"([^"]*)"sv\}',
                              f.read())
        self.assertEqual(mine, theirs)
        self.assertIn(("Functional.add", "Torch.add"), mine)


if __name__ == "__main__":
    unittest.main()
