#!/usr/bin/env python3
"""Checks a tprobe dump tree against independent truth.

  check_tree.py DUMP_PATH

For every JSON file: the bytes equal json.dumps(json.loads(s), indent=1).
For every tensor with a data_name: the .npy loads with numpy and its
statistics agree with numpy's (Max/Min exactly; Mean/Norm to the rounding
of the tensor's dtype, msprobe 26.x's PyTorch rules: integer and float64
tensors have only Max/Min, in their dtype). Prints one line per problem and exits 1 if any.
"""
import json
import os
import sys

import numpy as np

NATIVE = {"torch.float32": np.float32, "torch.float16": np.float16}


def expected_stats(arr, dtype):
    if arr.size == 0:
        return None, None, None, None
    if dtype == "torch.bool":
        return bool(arr.any()), bool(arr.all()), None, None
    if arr.ndim == 0:
        v = arr.item()
        return v, v, v, v
    if dtype not in NATIVE and dtype != "torch.bfloat16":
        return arr.max().item(), arr.min().item(), None, None
    work = np.float32 if dtype not in NATIVE else NATIVE[dtype]
    x = arr.astype(np.float64) if dtype == "torch.bfloat16" else arr.astype(work)
    if dtype == "torch.bfloat16":
        work = np.float32
    mean = np.mean(x.astype(np.float64))
    norm = np.sqrt(np.sum(np.square(x.astype(np.float64))))
    return float(x.max()), float(x.min()), float(work(mean)), float(work(norm))


def close(a, b, dtype):
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if np.isnan(a) and np.isnan(b):
        return True
    if a == b:
        return True
    if dtype == "torch.float16":
        ulp = float(np.spacing(np.float16(abs(b)))) if np.isfinite(b) else 0
    elif dtype == "torch.bfloat16":
        ulp = abs(b) * 2.0 ** -7
    else:
        ulp = float(np.spacing(np.float32(abs(b)))) if np.isfinite(b) else 0
    return abs(a - b) <= 2 * ulp


def walk(value, visit):
    if isinstance(value, dict):
        if value.get("type") == "torch.Tensor":
            visit(value)
            return
        for v in value.values():
            walk(v, visit)
    elif isinstance(value, list):
        for v in value:
            walk(v, visit)


def main():
    root = sys.argv[1]
    problems = []
    tensors = 0
    files = 0
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(".json"):
                continue
            path = os.path.join(dirpath, name)
            files += 1
            text = open(path, encoding="ascii").read()
            obj = json.loads(text)
            if json.dumps(obj, indent=1) != text:
                problems.append(f"{path}: bytes differ from json.dumps(indent=1)")
            if name != "dump.json":
                continue
            data_dir = os.path.join(dirpath, "dump_tensor_data")

            def visit(t):
                nonlocal tensors
                tensors += 1
                if "data_name" not in t:
                    return
                arr = np.load(os.path.join(data_dir, t["data_name"]))
                if list(arr.shape) != t["shape"]:
                    problems.append(f"{path}: {t['data_name']} shape {arr.shape}")
                exp = expected_stats(arr, t["dtype"])
                for key, e in zip(("Max", "Min", "Mean", "Norm"), exp):
                    exact = key in ("Max", "Min")
                    ok = (t[key] == e or (e is not None and t[key] is not None
                          and np.isnan(e) and np.isnan(t[key]))) if exact \
                        else close(t[key], e, t["dtype"])
                    if not ok:
                        problems.append(f"{path}: {t['data_name']} {key} "
                                        f"{t[key]!r} != numpy {e!r}")

            walk(obj["data"], visit)
    for p in problems:
        print(p)
    print(f"checked {files} files, {tensors} tensors, {len(problems)} problems")
    return 1 if problems or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
