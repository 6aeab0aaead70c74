"""Reading and comparing debug.json trees (level debug, save()): what the
PyTorch and MindSpore debug-save tests share.

    trees = read_debug_trees(dump)        # {"step0": (rank_dir, doc), ...}
    assert_same_debug(self, mine, theirs, "step0")
"""

import glob
import json
import os
import unittest

STATS = ("Max", "Min", "Mean", "Norm")


def f32_close(a, b) -> bool:
    """Equal after float32 rounding (the daemon's statistics are float32's
    exact values printed as float64, msprobe's come from float32 ops)."""
    return a == b or abs(a - b) <= 2e-7 * max(1.0, abs(a), abs(b))


def read_debug_trees(dump: str) -> dict:
    """step folder name -> (its one rank folder, its debug.json)."""
    out = {}
    for step_dir in sorted(glob.glob(os.path.join(dump, "step*"))):
        (rank,) = glob.glob(os.path.join(step_dir, "*"))
        with open(os.path.join(rank, "debug.json")) as f:
            out[os.path.basename(step_dir)] = (rank, json.load(f))
    return out


def assert_same_debug(test: unittest.TestCase, mine, theirs, path: str,
                      data_name=None) -> None:
    """mine equals theirs key for key in the same order, statistics after
    float32 rounding; data_name(mine, theirs, path), when given, checks the
    data_name values (whose file extensions may differ)."""
    if isinstance(theirs, dict):
        test.assertIsInstance(mine, dict, path)
        test.assertEqual(list(mine), list(theirs), path)
        for key, value in theirs.items():
            if key in STATS and isinstance(value, float):
                test.assertTrue(f32_close(mine[key], value),
                                f"{path}.{key}: {mine[key]} {value}")
            elif key == "data_name" and data_name is not None:
                data_name(mine[key], value, path)
            else:
                assert_same_debug(test, mine[key], value, f"{path}.{key}",
                                  data_name)
    elif isinstance(theirs, list):
        test.assertIsInstance(mine, list, path)
        test.assertEqual(len(mine), len(theirs), path)
        for i, (a, b) in enumerate(zip(mine, theirs)):
            assert_same_debug(test, a, b, f"{path}[{i}]", data_name)
    else:
        test.assertEqual(mine, theirs, path)
