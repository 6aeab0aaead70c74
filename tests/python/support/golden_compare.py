"""Compares a tprobe dump tree with msprobe's tree of the same run.

Two references, two questions (tests/data/golden/README.md says why):
- The stored golden tree, made on another processor, for what does not
  depend on the processor (``values=False``):
  - dump.json: header; entry names in order; each entry's keys in order;
    every value but a tensor's statistics (typed values exactly; tensors:
    keys, type, dtype, shape, requires_grad);
  - construct.json: every golden node with the same parent;
  - stack.json: the same groups of entry names.
- A tree msprobe wrote on this machine in this run for the same model and
  seed (``compare_values``), for the statistics: matched by entry name, key
  and position, Max/Min exactly, Mean/Norm within float32 rounding. Float
  kernels sum in another order on another CPU, so a stored Max is exact
  only on the processor that made it.
``values=True`` compares both at once, for two trees of one machine.
Accepted differences: module backward entries and construct nodes that the
golden tree lacks (msprobe could not write them on PyTorch 1.13), and so the
module backward parents of backward nodes that the golden tree has at the
top,
parameters_grad entries are matched by module (msprobe never resets K), and
the golden entries' is_recompute key, which msprobe 26.x no longer writes
(tprobe follows 26.x), and the statistics of integer and float64 tensors in
an 8.3.3 tree (a tree whose entries have is_recompute): 8.3.3 casts them to
float32 and writes all four, 26.x (and tprobe) writes Max/Min in the dtype
and Mean/Norm null.

Run as a script to print the differences of two step directories:
    golden_compare.py [--structure | --values] GOLDEN_DIR TPROBE_DIR
(--structure: what a stored tree checks; --values: the statistics only, as
against a live reference; neither: both.)
"""

import json
import math
import os
import re
import struct
import sys
from typing import Any, Dict, List, Optional, Tuple

_MODULE_BACKWARD = re.compile(r"^Module\..*\.backward\.\d+$")
_PARAMS_GRAD = re.compile(r"^(Module\..*\.parameters_grad)\.\d+$")
_TENSOR_STRUCTURE = ("type", "dtype", "shape", "requires_grad")
_TENSOR_EXACT = _TENSOR_STRUCTURE + ("Max", "Min")
# Mean and Norm: torch reduces in float32, tprobe in double and rounds once,
# so the golden values carry torch's accumulation error, which grows with
# the element count (the [128, 1000] cross-entropy gradient's golden Norm is
# 1.6e-5 off the exact value; tprobe's is within one ulp of it). Allowed:
# (64 + 2 sqrt(numel)) float32 ulps of the value, or of the data's scale for
# a mean that cancels to almost nothing.
_F32_EPS = 2.0 ** -23
_ULPS = 64
# Dtypes whose statistics msprobe 8.3.3 took of the float32 cast.
_CAST_BY_833 = {"torch.int8", "torch.uint8", "torch.int16", "torch.int32",
                "torch.int64", "torch.float64"}


def load(directory: str, name: str) -> Any:
    with open(os.path.join(directory, name), encoding="utf-8") as f:
        return json.load(f)


def is_addition(name: str) -> bool:
    return bool(_MODULE_BACKWARD.match(name))


def normalize(name: str) -> str:
    """The name with the parameters_grad index dropped."""
    m = _PARAMS_GRAD.match(name)
    return m.group(1) if m else name


def _finite_number(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def _close(golden: Any, actual: Any, scale: float, numel: int) -> bool:
    if golden is None or actual is None:
        return golden is actual
    if isinstance(golden, bool) or isinstance(actual, bool):
        return golden == actual
    g, a = float(golden), float(actual)
    if math.isnan(g) or math.isnan(a):
        return math.isnan(g) and math.isnan(a)
    if math.isinf(g) or math.isinf(a):
        return g == a
    ulps = _ULPS + 2.0 * math.sqrt(numel)
    return abs(g - a) <= ulps * _F32_EPS * max(abs(g), scale)


def _float32(v: float) -> float:
    return struct.unpack("f", struct.pack("f", v))[0]


def _compare_833_cast(golden: Dict[str, Any], actual: Dict[str, Any],
                      path: str, out: List[str]) -> None:
    """An integer or float64 tensor of an 8.3.3 tree against 26.x's form."""
    for key in ("Max", "Min"):
        g, a = golden.get(key), actual.get(key)
        if not (_finite_number(a) and _finite_number(g)
                and _float32(float(a)) == g):
            out.append(f"{path}.{key}: {a!r} is not golden {g!r} before "
                       f"8.3.3's float32 cast")
    for key in ("Mean", "Norm"):
        if actual.get(key) is not None:
            out.append(f"{path}.{key}: {actual.get(key)!r}, 26.x writes null")


def _compare_statistics(golden: Dict[str, Any], actual: Dict[str, Any],
                        path: str, out: List[str], msprobe833: bool) -> None:
    """A tensor's Max/Min/Mean/Norm."""
    if (msprobe833 and golden.get("dtype") in _CAST_BY_833
            and golden.get("shape")):
        _compare_833_cast(golden, actual, path, out)
        return
    for key in ("Max", "Min"):
        if actual.get(key) != golden.get(key):
            out.append(f"{path}.{key}: {actual.get(key)!r} != "
                       f"golden {golden.get(key)!r}")
    numel = math.prod(golden.get("shape") or [1])
    scale = max([abs(v) for v in (golden.get("Max"), golden.get("Min"))
                 if _finite_number(v)] or [0.0])
    for key in ("Mean", "Norm"):
        if not _close(golden.get(key), actual.get(key),
                      scale if key == "Mean" else 0.0, numel):
            out.append(f"{path}.{key}: {actual.get(key)!r} not within "
                       f"float32 rounding of golden {golden.get(key)!r}")


def compare_value(golden: Any, actual: Any, path: str, out: List[str],
                  msprobe833: bool = False, values: bool = True) -> None:
    """``values``: a tensor's statistics too (else its structure only)."""
    if isinstance(golden, dict) and golden.get("type") == "torch.Tensor":
        if not isinstance(actual, dict):
            out.append(f"{path}: tensor expected, got {actual!r}")
            return
        cast_by_833 = (msprobe833 and golden.get("dtype") in _CAST_BY_833
                       and golden.get("shape"))
        if not cast_by_833 and list(actual) != list(golden):
            out.append(f"{path}: tensor keys {list(actual)} != {list(golden)}")
        for key in _TENSOR_STRUCTURE:
            if actual.get(key) != golden.get(key):
                out.append(f"{path}.{key}: {actual.get(key)!r} != "
                           f"golden {golden.get(key)!r}")
        if values:
            _compare_statistics(golden, actual, path, out, msprobe833)
        return
    if isinstance(golden, dict):
        if not isinstance(actual, dict) or list(actual) != list(golden):
            mine = list(actual) if isinstance(actual, dict) else actual
            out.append(f"{path}: keys {mine!r} != golden {list(golden)}")
            return
        for key in golden:
            compare_value(golden[key], actual[key], f"{path}.{key}", out,
                          msprobe833, values)
        return
    if isinstance(golden, list):
        if not isinstance(actual, list) or len(actual) != len(golden):
            out.append(f"{path}: {actual!r} != golden list of {len(golden)}")
            return
        for i, (g, a) in enumerate(zip(golden, actual)):
            compare_value(g, a, f"{path}[{i}]", out, msprobe833, values)
        return
    if isinstance(golden, float) and isinstance(actual, float):
        if not (golden == actual
                or (math.isnan(golden) and math.isnan(actual))):
            out.append(f"{path}: {actual!r} != golden {golden!r}")
        return
    if type(golden) is not type(actual) or golden != actual:
        out.append(f"{path}: {actual!r} != golden {golden!r}")


def _names(data: Dict[str, Any]) -> List[str]:
    return [normalize(n) for n in data if not is_addition(n)]


def compare_dump(golden: Dict[str, Any], actual: Dict[str, Any],
                 values: bool = True) -> List[str]:
    out: List[str] = []
    for key in ("task", "level", "framework", "dump_data_dir"):
        if golden.get(key) != actual.get(key):
            out.append(f"dump.json {key}: {actual.get(key)!r} != golden "
                       f"{golden.get(key)!r}")
    if list(actual) != list(golden):
        out.append(f"dump.json keys {list(actual)} != {list(golden)}")
    g_data, a_data = golden["data"], actual["data"]
    g_names, a_names = _names(g_data), _names(a_data)
    if g_names != a_names:
        for i, (g, a) in enumerate(zip(g_names, a_names)):
            if g != a:
                out.append(f"entry #{i}: {a} != golden {g} "
                           f"(first difference of the entry order)")
                break
        else:
            out.append(f"entry count {len(a_names)} != golden {len(g_names)}")
        extra = sorted(set(a_names) - set(g_names))
        missing = sorted(set(g_names) - set(a_names))
        if extra:
            out.append(f"entries not in golden: {extra[:10]}")
        if missing:
            out.append(f"golden entries missing: {missing[:10]}")
    by_norm = {normalize(n): v for n, v in a_data.items()}
    msprobe833 = _is_833(g_data)
    for name, entry in g_data.items():
        mine = by_norm.get(normalize(name))
        if mine is not None:
            entry = {k: v for k, v in entry.items() if k != "is_recompute"}
            compare_value(entry, mine, name, out, msprobe833, values)
    return out


def _is_833(data: Dict[str, Any]) -> bool:
    return any("is_recompute" in entry for entry in data.values())


def _compare_live(reference: Any, actual: Any, path: str, out: List[str],
                  msprobe833: bool) -> None:
    if isinstance(reference, dict) and reference.get("type") == "torch.Tensor":
        if isinstance(actual, dict):
            _compare_statistics(reference, actual, path, out, msprobe833)
        else:
            out.append(f"{path}: tensor expected, got {actual!r}")
    elif isinstance(reference, dict):
        if not isinstance(actual, dict):
            out.append(f"{path}: {actual!r} where the reference has a dict")
            return
        for key, value in reference.items():
            if key == "is_recompute":
                continue
            if key not in actual:
                out.append(f"{path}.{key}: missing (in the reference)")
            else:
                _compare_live(value, actual[key], f"{path}.{key}", out,
                              msprobe833)
    elif isinstance(reference, list):
        if not isinstance(actual, list) or len(actual) != len(reference):
            out.append(f"{path}: {actual!r} != reference list of "
                       f"{len(reference)}")
            return
        for i, (r, a) in enumerate(zip(reference, actual)):
            _compare_live(r, a, f"{path}[{i}]", out, msprobe833)
    elif not (reference == actual or (
            isinstance(reference, float) and isinstance(actual, float)
            and math.isnan(reference) and math.isnan(actual))):
        out.append(f"{path}: {actual!r} != reference {reference!r}")


def compare_values(reference: Dict[str, Any],
                   actual: Dict[str, Any]) -> List[str]:
    """The values of ``actual`` (a dump.json) against ``reference``, the
    dump.json that msprobe wrote for the same model and seed on this
    machine in this run: entries matched by name (parameters_grad by
    module where the indices differ), dict values by key, list values by
    position, whatever their order (which compare_dump checks against the
    stored tree). Tensors: Max/Min exactly, Mean/Norm within float32
    rounding; every other value exactly. Entries only tprobe writes
    (module backward on PyTorch 1.13) have no reference and are not
    checked here."""
    out: List[str] = []
    ref_data = reference["data"]
    msprobe833 = _is_833(ref_data)
    exact = actual["data"]
    mine = {normalize(n): v for n, v in exact.items()}
    for name, entry in ref_data.items():
        # By name; a parameters_grad entry by module where its index
        # differs (msprobe 8.3.3 never resets it).
        if name in exact:
            _compare_live(entry, exact[name], name, out, msprobe833)
        elif normalize(name) in mine:
            _compare_live(entry, mine[normalize(name)], name, out, msprobe833)
        else:
            out.append(f"{name}: in the reference, not in tprobe's tree")
    return out


def compare_construct(golden: Dict[str, Any],
                      actual: Dict[str, Any]) -> Tuple[List[str], List[str]]:
    """Returns (errors, notes): errors for wrong or missing parents, notes
    for a different key order of the golden nodes."""
    out: List[str] = []
    for node, parent in golden.items():
        if node not in actual:
            out.append(f"construct.json: {node} missing")
        elif parent is None and is_addition(actual[node] or ""):
            # A backward call inside a module's backward: its parent is the
            # module backward node, which the golden tree lacks.
            continue
        elif actual[node] != parent:
            out.append(f"construct.json: {node} -> {actual[node]!r}, golden "
                       f"-> {parent!r}")
    for node in actual:
        if node not in golden and not is_addition(node):
            out.append(f"construct.json: extra node {node}")
    notes = []
    order = [n for n in actual if n in golden]
    if order != list(golden):
        first = next(i for i, (a, g) in enumerate(zip(order, golden))
                     if a != g)
        notes.append(f"construct.json key order differs from golden at "
                     f"#{first}: {order[first]} where golden has "
                     f"{list(golden)[first]}")
    return out, notes


def stack_groups(stack: Dict[str, Any],
                 keep: Optional[set] = None) -> List[frozenset]:
    groups = []
    for _, (names, _lines) in stack.items():
        names = frozenset(normalize(n) for n in names
                          if keep is None or normalize(n) in keep)
        if names:
            groups.append(names)
    return groups


def compare_stack(golden: Dict[str, Any], actual: Dict[str, Any]) -> List[str]:
    g_groups = stack_groups(golden)
    keep = set().union(*g_groups) if g_groups else set()
    a_groups = stack_groups(actual, keep)
    if sorted(map(sorted, g_groups)) != sorted(map(sorted, a_groups)):
        missing = [sorted(g) for g in g_groups if g not in a_groups]
        return [f"stack.json groups differ; golden groups not found: "
                f"{missing[:3]}"]
    return []


def compare_tree(golden_dir: str, actual_dir: str,
                 values: bool = True) -> Tuple[List[str], List[str]]:
    """dump.json, construct.json and stack.json; ``values=False`` for a
    stored tree (a tensor's statistics left out)."""
    errors = compare_dump(load(golden_dir, "dump.json"),
                          load(actual_dir, "dump.json"), values)
    construct_errors, notes = compare_construct(
        load(golden_dir, "construct.json"), load(actual_dir, "construct.json"))
    errors += construct_errors
    errors += compare_stack(load(golden_dir, "stack.json"),
                            load(actual_dir, "stack.json"))
    return errors, notes


def compare_live_tree(reference_dir: str, actual_dir: str) -> List[str]:
    """Every difference of tprobe's tree in ``actual_dir`` from the one
    msprobe wrote in ``reference_dir`` for the same model, seed and config
    on this machine in this run: the structure (compare_dump without
    values), every value (compare_values), construct.json parents and
    stack.json groups."""
    reference = load(reference_dir, "dump.json")
    actual = load(actual_dir, "dump.json")
    errors = compare_dump(reference, actual, values=False)
    errors += compare_values(reference, actual)
    construct_errors, _ = compare_construct(
        load(reference_dir, "construct.json"),
        load(actual_dir, "construct.json"))
    errors += construct_errors
    errors += compare_stack(load(reference_dir, "stack.json"),
                            load(actual_dir, "stack.json"))
    return errors


def _main(argv: List[str]) -> int:
    mode = argv[0] if argv and argv[0] in ("--structure", "--values") else ""
    dirs = argv[1:] if mode else argv
    if len(dirs) != 2:
        print(__doc__.split("Run as a script")[1], file=sys.stderr)
        return 2
    if mode == "--values":
        errs, notes_ = compare_values(load(dirs[0], "dump.json"),
                                      load(dirs[1], "dump.json")), []
    else:
        errs, notes_ = compare_tree(dirs[0], dirs[1], mode != "--structure")
    for line in errs:
        print("ERROR", line)
    for line in notes_:
        print("NOTE", line)
    print(f"{len(errs)} differences")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
