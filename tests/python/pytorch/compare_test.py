"""`tprobe compare` and `tprobe nan-analyze` end to end, on trees that real
runs of tests/python/pytorch/compare_model.py wrote through a real tprobed:

- a run with a perturbation planted in module fc2 against a clean run
  (task tensor): with --strict-verdicts the first divergence is the first
  call in fc2, and the metrics in the CSV agree with numpy on the same .npy
  files;
- a tree against itself passes every row (exit 0), and so do msprobe's
  stored trees (tests/data/golden26, 8.3.3's tests/data/golden);
- a tree with one dump.json entry removed: that entry's rows are missing
  (target without it) or extra (baseline without it), never pass;
- where msprobe is installed, its tree of the same model is read, and every
  row both trees hold passes;
- a 2-rank torchrun (gloo) whose rank 1 makes a NaN: nan-analyze names
  rank 1's call, and rank 0's all_reduce as a receipt;
- report.html opens in headless Chromium without errors (skipped where
  Chromium is not installed), its module tree open along fc2, with a
  screenshot.
"""

import csv
import glob
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import unittest
from typing import Dict, List, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
from torchrun_test import torchrun  # noqa: E402
from tprobed_fixture import (  # noqa: E402
    ROOT, Tprobed, fresh_dir, tprobed_binary)

SCRIPT = os.path.join(HERE,
                      "compare_model.py")
HAVE_MSPROBE = importlib.util.find_spec("msprobe") is not None
EXIT_FOUND = 4
EXIT_USAGE = 2


def tprobe_cli() -> str:
    return os.path.abspath(os.environ.get("TPROBE_CLI")
                           or os.path.join(ROOT, "build", "bin", "tprobe"))


def run_model(tmp: str, name: str, task: str, **flags) -> str:
    """compare_model.py under tprobe; returns the dump path."""
    dump = os.path.join(tmp, name)
    extra = []
    for key, value in flags.items():
        if value is True:
            extra.append("--" + key.replace("_", "-"))
        else:
            extra += ["--" + key.replace("_", "-"), str(value)]
    work = fresh_dir("tp-cmpd-")
    with Tprobed(tprobed_binary(), work) as daemon:
        subprocess.run([sys.executable, SCRIPT, "--tool", "tprobe", "--task",
                        task, "--dump-path", dump] + extra,
                       env=daemon.env(), check=True, timeout=600,
                       stdout=subprocess.DEVNULL)
        if daemon.stop() != 0:
            raise AssertionError("tprobed failed: " + daemon.log())
    return dump


def compare(target: str, baseline: str, out: str, *options: str
            ) -> Tuple[int, str]:
    run = subprocess.run([tprobe_cli(), "compare", target, baseline, "-o",
                          out, *options], timeout=600, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return run.returncode, run.stdout


def read_csv(path: str) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def numpy_metrics(n: np.ndarray, b: np.ndarray) -> Dict[str, float]:
    """msprobe's definitions, in numpy."""
    n = n.astype(np.float64).ravel()
    b = b.astype(np.float64).ravel()
    eps = np.finfo(np.float64).eps
    cos = float(np.dot(n, b) / (np.linalg.norm(n) * np.linalg.norm(b)))
    if cos > 0.9999:
        cos = round(cos, 6)
    diff = np.abs(n - b)
    safe_b = np.where(b == 0, eps, b)
    safe_n = np.where(b == 0, n + eps, n)
    rel = np.abs((safe_n - safe_b) / safe_b)
    return {"Cosine": cos, "EucDist": float(np.linalg.norm(n - b)),
            "MaxAbsErr": float(diff.max()),
            "MaxRelativeErr": float(rel.max()),
            "One Thousandth Err Ratio": float(np.mean(rel < 0.001)),
            "Five Thousandths Err Ratio": float(np.mean(rel < 0.005))}


class CompareTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = fresh_dir("tp-cmp-")
        cls.clean = run_model(cls.tmp, "clean", "tensor")
        cls.perturbed = run_model(cls.tmp, "perturbed", "tensor",
                                  perturb=True)

    def out(self, name: str) -> str:
        return os.path.join(self.tmp, "out-" + name)

    def rank_dir(self, dump: str) -> str:
        [rank] = glob.glob(os.path.join(dump, "step0", "*"))
        return rank

    def test_planted_perturbation_is_the_first_divergence(self) -> None:
        out = self.out("perturbed")
        # msprobe 26.2's checks (the default) judge a call by how much more
        # its output moved than its inputs: fc2's linear, whose weight
        # moved as much as its output, passes, and the first row flagged is
        # a later one. tprobe's stricter per-row rules name fc2.
        rc, text = compare(self.perturbed, self.clean, self.out("default"))
        self.assertEqual(rc, EXIT_FOUND, text)
        rc, text = compare(self.perturbed, self.clean, out,
                           "--strict-verdicts")
        self.assertEqual(rc, EXIT_FOUND, text)
        first = [line for line in text.splitlines()
                 if line.startswith("first divergence:")]
        self.assertEqual(len(first), 1, text)
        # The first row that differs is the first call inside fc2: its
        # linear's weight (mix level: the API call comes before the module
        # entry, which is written when the module returns).
        construct_path = os.path.join(self.rank_dir(self.perturbed),
                                      "construct.json")
        with open(construct_path) as f:
            construct = json.load(f)
        with open(os.path.join(self.rank_dir(self.perturbed),
                               "dump.json")) as f:
            entries = list(json.load(f)["data"])
        in_fc2 = [e for e in entries
                  if construct.get(e) == "Module.fc2.Linear.forward.0"]
        self.assertTrue(in_fc2, construct)
        self.assertIn("call:        " + in_fc2[0], text)
        self.assertIn("Module.fc2.Linear.forward.0 > " + in_fc2[0], text)
        [csv_path] = glob.glob(os.path.join(out, "compare_result*.csv"))
        rows = read_csv(csv_path)
        # Nothing before fc2's call differs.
        first_bad = next(i for i, r in enumerate(rows)
                         if r["Result"] != "pass")
        self.assertTrue(rows[first_bad]["NPU Name"].startswith(in_fc2[0]),
                        rows[first_bad])
        self.assertEqual(rows[first_bad]["Result"], "error")
        # Every tensor row's metrics agree with numpy on the same files.
        checked = 0
        tdir = os.path.join(self.rank_dir(self.perturbed), "dump_tensor_data")
        bdir = os.path.join(self.rank_dir(self.clean), "dump_tensor_data")
        for row in rows:
            names = row["Data_name"].strip("[]").replace("'", "").split(", ")
            if (row["Cosine"] in ("N/A", "unsupported")
                    or not names[0].endswith(".npy")):
                continue
            n = np.load(os.path.join(tdir, names[0]))
            b = np.load(os.path.join(bdir, names[1]))
            if (n.size < 2 or not np.all(np.isfinite(n))
                    or not np.any(n) or not np.any(b)):
                continue
            expected = numpy_metrics(n, b)
            for key, value in expected.items():
                got = float(row[key])
                self.assertTrue(
                    math.isclose(got, value, rel_tol=1e-9, abs_tol=2e-12),
                    f"{row['NPU Name']} {key}: {got} vs numpy {value}")
            checked += 1
        self.assertGreater(checked, 10)

    def test_a_tree_against_itself_passes_every_row(self) -> None:
        out = self.out("self")
        rc, text = compare(self.clean, self.clean, out)
        self.assertEqual(rc, 0, text)
        self.assertIn("every row passes", text)
        [csv_path] = glob.glob(os.path.join(out, "compare_result*.csv"))
        rows = read_csv(csv_path)
        self.assertGreater(len(rows), 20)
        self.assertEqual({r["Result"] for r in rows},
                         {"pass"})
        # Every dump.json of both runs with the same model and seed.
        rc, text = compare(self.clean, run_model(self.tmp, "clean2",
                                                 "tensor"),
                           self.out("rerun"))
        self.assertEqual(rc, 0, text)

    def test_stored_msprobe_trees_pass_against_themselves(self) -> None:
        for tree in (os.path.join(ROOT, "tests", "data", "golden26", "mix"),
                     os.path.join(ROOT, "tests", "data", "golden", "mix")):
            if not os.path.isdir(tree):
                continue
            with self.subTest(tree=tree):
                out = self.out(os.path.basename(os.path.dirname(tree)))
                rc, text = compare(tree, tree, out)
                self.assertEqual(rc, 0, text)
                files = glob.glob(os.path.join(out, "compare_result*.csv"))
                self.assertEqual(len(files), 2)  # step0 and step1
                for path in files:
                    self.assertEqual({r["Result"] for r in read_csv(path)},
                                     {"pass"})

    def test_a_removed_entry_is_missing_or_extra_never_pass(self) -> None:
        cut = os.path.join(self.tmp, "cut")
        shutil.copytree(self.clean, cut)
        dump_json = os.path.join(cut, "step0", "rank", "dump.json")
        if not os.path.exists(dump_json):
            dump_json = glob.glob(os.path.join(cut, "step0", "*",
                                               "dump.json"))[0]
        with open(dump_json) as f:
            dump = json.load(f)
        removed = "Module.fc2.Linear.forward.0"
        self.assertIn(removed, dump["data"])
        del dump["data"][removed]
        with open(dump_json, "w") as f:
            json.dump(dump, f, indent=1)

        for target, baseline, verdict in ((cut, self.clean, "missing"),
                                          (self.clean, cut, "extra")):
            with self.subTest(verdict=verdict):
                out = self.out(verdict)
                rc, text = compare(target, baseline, out)
                self.assertEqual(rc, EXIT_FOUND, text)
                [path] = glob.glob(os.path.join(out, "compare_result*.csv"))
                rows = read_csv(path)
                name = "Bench Name" if verdict == "missing" else "NPU Name"
                mine = [r for r in rows if r[name].startswith(removed + ".")]
                self.assertGreaterEqual(len(mine), 3)  # input, weight, output
                self.assertEqual({r["Result"] for r in mine},
                                 {verdict})
                others = [r for r in rows if r not in mine]
                self.assertEqual({r["Result"]
                                  for r in others}, {"pass"})
                self.assertIn(f"first divergence: {removed}.", text)

    def test_fuzzy_and_mapping(self) -> None:
        mapping = os.path.join(self.tmp, "map.yaml")
        with open(mapping, "w") as f:
            f.write("# target: baseline\nModule.fc3: Module.fc3\n")
        rc, text = compare(self.clean, self.clean, self.out("fuzzy"),
                           "--fuzzy", "--mapping", mapping)
        self.assertEqual(rc, 0, text)

    def test_bad_input_is_a_usage_error(self) -> None:
        rc, text = compare(os.path.join(self.tmp, "nothing"), self.clean,
                           self.out("bad"))
        self.assertEqual(rc, EXIT_USAGE, text)
        self.assertIn("nothing", text)
        not_json = os.path.join(self.tmp, "not_json", "dump.json")
        os.makedirs(os.path.dirname(not_json))
        with open(not_json, "w") as f:
            f.write("{\"data\": [1, 2")
        rc, text = compare(not_json, not_json, self.out("bad2"))
        self.assertEqual(rc, EXIT_USAGE, text)
        self.assertIn("not valid JSON", text)

    @unittest.skipUnless(HAVE_MSPROBE, "msprobe is not installed")
    def test_an_msprobe_tree_is_read(self) -> None:
        mine = run_model(self.tmp, "tp-stats", "statistics")
        theirs = os.path.join(self.tmp, "ms-stats")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run([sys.executable, SCRIPT, "--tool", "msprobe", "--task",
                        "statistics", "--dump-path", theirs], env=env,
                       check=True, timeout=600, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        # msprobe 26.x writes proc{pid}, tprobe rank: compare the steps'
        # only rank folders.
        out = self.out("msprobe")
        rc, text = compare(self.rank_dir(mine), self.rank_dir(theirs), out)
        self.assertIn(rc, (0, EXIT_FOUND), text)
        [path] = glob.glob(os.path.join(out, "compare_result*.csv"))
        rows = read_csv(path)
        both = [r for r in rows
                if r["NPU Name"] != "N/A" and r["Bench Name"] != "N/A"]
        self.assertGreater(len(both), 20)
        self.assertEqual([(r["NPU Name"], r["Result"]) for r in both
                          if r["Result"] != "pass"], [])

    def test_report_html_opens_in_chromium(self) -> None:
        out = self.out("html")
        compare(self.perturbed, self.clean, out, "--strict-verdicts")
        report = os.path.join(out, "report.html")
        with open(report, encoding="utf-8") as f:
            page = f.read()
        self.assertNotIn("http://", page.replace(
            'xmlns="http://www.w3.org/2000/svg"', ""))
        self.assertNotIn("https://", page)
        self.assertIn("<svg", page)
        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        if not browser:
            self.skipTest("Chromium is not installed")
        base = [browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--enable-logging=stderr", "--v=0",
                f"--user-data-dir={os.path.join(self.tmp, 'chromium')}"]
        dom = subprocess.run(base + ["--dump-dom", "file://" + report],
                             timeout=120, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        body = re.search(r"<body[^>]*>", dom.stdout)
        self.assertIsNotNone(body, dom.stderr[-3000:])
        # The script ran to its end, and no error event fired.
        self.assertIn('data-ready="1"', body.group(0))
        self.assertNotIn("data-error", body.group(0))
        # The module tree is drawn, open along the divergence in fc2.
        self.assertIn('<div id="tree">', dom.stdout)
        self.assertIn("<b>Module.fc2.Linear.forward.0</b>", dom.stdout)
        self.assertIn("<li><code>Module.fc2.Linear.forward.0</code></li>",
                      dom.stdout)
        console = [line for line in dom.stderr.splitlines()
                   if "CONSOLE" in line or "Uncaught" in line]
        self.assertEqual(console, [])
        shot = os.path.join(out, "report.png")
        subprocess.run(base + [f"--screenshot={shot}",
                               "--window-size=1280,1600", "file://" + report],
                       timeout=120, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        self.assertTrue(os.path.getsize(shot) > 1000)
        print(f"\nreport.html screenshot: {shot}")


class NanAnalyzeTest(unittest.TestCase):
    def test_nan_made_on_rank1_is_traced_there(self) -> None:
        tmp = fresh_dir("tp-nan-")
        dump = os.path.join(tmp, "dump")
        with Tprobed(tprobed_binary(), tmp) as daemon:
            proc = subprocess.run(
                torchrun() + [SCRIPT, "--tool", "tprobe", "--task",
                              "statistics", "--dump-path", dump,
                              "--nan-rank", "1"],
                env=daemon.env(OMP_NUM_THREADS="1"), cwd=tmp, timeout=600,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.assertEqual(proc.returncode, 0, proc.stdout[-3000:])
            self.assertEqual(daemon.stop(), 0, daemon.log())
        step = os.path.join(dump, "step0")
        self.assertEqual(sorted(os.listdir(step)), ["rank0", "rank1"])
        run = subprocess.run([tprobe_cli(), "nan-analyze", step],
                             timeout=120, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        self.assertEqual(run.returncode, EXIT_FOUND, run.stdout)
        lines = run.stdout.splitlines()
        self.assertTrue(lines[0].startswith("origin: rank1, Torch.sqrt."),
                        run.stdout)
        self.assertIn("Module.mid.Shift.forward.0", lines[1])
        self.assertIn("its inputs are finite, its output is not", run.stdout)
        self.assertRegex(run.stdout,
                         r"rank0: first at Distributed\.all_reduce\.\d+\."
                         r"forward \(received from another rank\)")
        # One rank alone: its own first NaN.
        run = subprocess.run([tprobe_cli(), "nan-analyze",
                              os.path.join(step, "rank0")], timeout=120,
                             text=True, stdout=subprocess.PIPE)
        self.assertEqual(run.returncode, EXIT_FOUND, run.stdout)
        self.assertIn("Distributed.all_reduce", run.stdout)


if __name__ == "__main__":
    unittest.main()
