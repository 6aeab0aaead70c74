"""Compares a tprobe MindSpore dump tree with the installed msprobe's tree
of the same run (tests/python/mindspore/mindspore_test.py).

What must match, for every step directory:
- dump.json: the header; entry names in the same order; each entry's keys
  in order; every value (typed values exactly; tensors: type, dtype, shape
  and the key list exactly, Max/Min exactly, Mean/Norm within float32
  rounding: MindSpore reduces in float32, tprobed in double).
- construct.json: the same dict, in the same order.
- stack.json: the same set of entry names with a stack (the lines differ:
  msprobe's include its own hook frames).

Run as a script to print the differences of two step/rank directories:
    mindspore_compare.py MSPROBE_DIR TPROBE_DIR
"""

import json
import math
import os
import sys
from typing import Any, List

_F32_EPS = 2.0 ** -23


def load(directory: str, name: str) -> Any:
    with open(os.path.join(directory, name), encoding="utf-8") as f:
        return json.load(f)


def _close(ref: Any, actual: Any, numel: int) -> bool:
    if ref is None or actual is None or isinstance(ref, bool):
        return ref == actual
    r, a = float(ref), float(actual)
    if math.isnan(r) or math.isnan(a):
        return math.isnan(r) and math.isnan(a)
    if math.isinf(r) or math.isinf(a):
        return r == a
    # float32 summation error grows with the element count.
    ulps = 8 + 2.0 * math.sqrt(max(numel, 1))
    return abs(r - a) <= ulps * _F32_EPS * max(abs(r), 1e-30)


def compare_value(ref: Any, actual: Any, path: str, out: List[str]) -> None:
    if isinstance(ref, dict) and ref.get("type") == "mindspore.Tensor":
        if not isinstance(actual, dict) or list(actual) != list(ref):
            out.append(f"{path}: tensor {actual!r} != {ref!r}")
            return
        for key in ("type", "dtype", "shape", "Max", "Min"):
            if actual[key] != ref[key]:
                out.append(f"{path}.{key}: {actual[key]!r} != {ref[key]!r}")
        numel = math.prod(ref["shape"]) if ref["shape"] else 1
        for key in ("Mean", "Norm"):
            if not _close(ref[key], actual[key], numel):
                out.append(f"{path}.{key}: {actual[key]!r} != {ref[key]!r}")
        return
    if isinstance(ref, dict):
        if not isinstance(actual, dict) or list(actual) != list(ref):
            out.append(f"{path}: keys {list(actual) if isinstance(actual, dict) else actual!r} != {list(ref)}")
            return
        for key in ref:
            compare_value(ref[key], actual[key], f"{path}.{key}", out)
        return
    if isinstance(ref, list):
        if not isinstance(actual, list) or len(actual) != len(ref):
            out.append(f"{path}: {actual!r} != {ref!r}")
            return
        for i, (r, a) in enumerate(zip(ref, actual)):
            compare_value(r, a, f"{path}[{i}]", out)
        return
    if ref != actual or type(ref) is not type(actual):
        out.append(f"{path}: {actual!r} != {ref!r}")


def compare_dirs(ref_dir: str, actual_dir: str) -> List[str]:
    out: List[str] = []
    ref, actual = load(ref_dir, "dump.json"), load(actual_dir, "dump.json")
    for key in ("task", "level", "framework", "dump_data_dir"):
        if ref.get(key) != actual.get(key):
            out.append(f"dump.json {key}: {actual.get(key)!r} != "
                       f"{ref.get(key)!r}")
    ref_names, names = list(ref["data"]), list(actual["data"])
    if names != ref_names:
        out.append("entry names differ:\n  msprobe: %s\n  tprobe:  %s" % (
            ref_names, names))
    for name in ref_names:
        if name in actual["data"]:
            compare_value(ref["data"][name], actual["data"][name], name, out)
    ref_c, c = load(ref_dir, "construct.json"), load(actual_dir,
                                                       "construct.json")
    if list(ref_c.items()) != list(c.items()):
        out.append("construct.json differs:\n  msprobe: %s\n  tprobe:  %s" % (
            list(ref_c.items()), list(c.items())))
    ref_s = {n for group in load(ref_dir, "stack.json").values()
             for n in group[0]}
    s = {n for group in load(actual_dir, "stack.json").values()
         for n in group[0]}
    if ref_s != s:
        out.append(f"stack.json names: only msprobe {sorted(ref_s - s)}, "
                   f"only tprobe {sorted(s - ref_s)}")
    return out


if __name__ == "__main__":
    problems = compare_dirs(sys.argv[1], sys.argv[2])
    print("\n".join(problems) or "same")
    sys.exit(1 if problems else 0)
