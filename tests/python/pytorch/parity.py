"""Runs parity_model.py under msprobe and under tprobe with one config and
reduces both dump trees to what the selection rules decide, so that
parity_test.py can compare them:

- per step: the entry names of dump.json in order, each with its keys in
  order (and the keys of its tensors' dicts are left out: values are
  compared elsewhere);
- the stack.json groups: the names of each group, in order;
- the construct.json keys, in order, with their parents.

msprobe 26.x names the rank directory proc{pid} when there is no
distributed rank, tprobe "rank"; each step directory holds exactly one,
which is the one read.
"""

import json
import os
import subprocess
import sys
from typing import Dict, List, Optional, Set

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "parity_model.py")


def write_config(path: str, config: dict) -> str:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=1)
    return path


def model_args(tool: str, config_path: str, dump_path: str, steps: int,
               overflow_from: int, half: bool,
               whole_step: bool = False) -> List[str]:
    return ([MODEL, "--tool", tool, "--config", config_path, "--dump-path",
             dump_path, "--steps", str(steps), "--overflow-from",
             str(overflow_from)] + (["--half"] if half else [])
            + (["--whole-step"] if whole_step else []))


def run(cmd: List[str], env: Dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)


def _load(path: str):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def rank_dir(step_dir: str) -> Optional[str]:
    subdirs = sorted(d for d in os.listdir(step_dir)
                     if os.path.isdir(os.path.join(step_dir, d)))
    return os.path.join(step_dir, subdirs[0]) if len(subdirs) == 1 else None


def summarize(dump_path: str) -> Dict[str, dict]:
    """{"step0": {"entries": [[name, [keys]]...], "stack": [[names]...],
    "construct": [[name, parent]...]}, ...} for every step directory."""
    result: Dict[str, dict] = {}
    if not os.path.isdir(dump_path):
        return result
    for step in sorted(os.listdir(dump_path)):
        step_dir = os.path.join(dump_path, step)
        rank = rank_dir(step_dir) if os.path.isdir(step_dir) else None
        if rank is None:
            continue
        dump = _load(os.path.join(rank, "dump.json"))
        stack = _load(os.path.join(rank, "stack.json"))
        construct = _load(os.path.join(rank, "construct.json"))
        result[step] = {
            "entries": [[name, list(body)]
                        for name, body in dump["data"].items()],
            "stack": [group[0] for _, group in sorted(
                stack.items(), key=lambda kv: int(kv[0]))],
            "construct": [[k, v] for k, v in construct.items()],
        }
    return result


def statistics(dump_path: str,
               dtypes: Optional[Set[str]] = None) -> Dict[str, list]:
    """{"step0/Entry.key[i]...": [dtype, Max, Min, Mean, Norm]} for every
    tensor (of ``dtypes`` only, when given)."""
    out: Dict[str, list] = {}

    def walk(value, path: str) -> None:
        if isinstance(value, dict):
            if "Max" in value and "dtype" in value:
                if dtypes is None or value["dtype"] in dtypes:
                    out[path] = [value.get(k) for k in ("dtype", "Max", "Min",
                                                         "Mean", "Norm")]
                return
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")

    for step in sorted(os.listdir(dump_path)):
        rank = rank_dir(os.path.join(dump_path, step))
        if rank is not None:
            walk(_load(os.path.join(rank, "dump.json"))["data"], step)
    return out


def modes(dump_path: str) -> List[str]:
    """"path mode" for every file and directory under dump_path."""
    out = []
    for root, dirs, files in os.walk(dump_path):
        for name in dirs + files:
            path = os.path.join(root, name)
            out.append("%s %o" % (os.path.relpath(path, dump_path),
                                  os.stat(path).st_mode & 0o777))
    return sorted(out)


if __name__ == "__main__":
    # python parity.py DUMP_PATH: print the summary (for a look by hand).
    json.dump(summarize(sys.argv[1]), sys.stdout, indent=1)
