#!/usr/bin/env python3
"""One lifecycle scenario of a framework's PrecisionDebugger, run in its own
process by debugger_core_test.py against a real tprobed ($TPROBE_SOCKET):
a small real model (a Linear/Dense and a ReLU) and one API call (sin) per
step, at level mix. It prints one JSON object (the last stdout line) with
what it saw inside the process; the test reads the dump tree.

    debugger_core_scenario.py FRAMEWORK CASE WORKDIR [CLI]

FRAMEWORK: torch | mindspore. CASE:
- rank:  the rank becomes known after the debugger was made (torch:
         torch.distributed initialised, gloo, 1 rank; MindSpore: $RANK_ID
         set), then one step;
- fork:  a child forked inside a recorded step finds its hooks quiet and
         (torch) runs the model and cos(): only the parent's calls are
         recorded;
- end:   step [0]: at the first start() after it every hook is gone; a
         live config (CLI configure) naming step 3 puts them back;
- level: level L0, then a live config with level mix: API hooks come in at
         the step boundary;
- l2:    level L2 is refused at construction, leaving no instance.
"""

import json
import os
import subprocess
import sys
from typing import Any, Dict, List


class Torch:
    prefix = "Torch"

    def __init__(self) -> None:
        import torch
        self.torch = torch
        from tprobe.torch import PrecisionDebugger
        self.Debugger = PrecisionDebugger
        # The originals, taken before the debugger replaces them.
        self.originals = (torch.sin, torch.Tensor.add,
                          torch.nn.utils.clip_grad_norm_)
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(4, 4),
                                         torch.nn.ReLU())
        self.x = torch.randn(3, 4)

    def run(self) -> None:
        torch = self.torch
        loss = torch.sin(self.model(self.x)).sum()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def other(self) -> None:
        self.torch.cos(self.model(self.x))

    def patched(self) -> Dict[str, Any]:
        """What the debugger replaced or hooked, now."""
        torch = self.torch
        sin, add, clip = self.originals
        linear = self.model[0]
        return {
            "api": torch.sin is not sin,
            "tensor_api": torch.Tensor.add is not add,
            # hooks, or (torch >= 2.1) tprobe's module call wrapper
            "modules": bool(linear._forward_pre_hooks
                            or linear._forward_hooks
                            or vars(linear).get("_compiled_call_impl")),
            # a tensor hook (torch 1.13) or a post-accumulate one
            "grads": bool(linear.weight._backward_hooks or getattr(
                linear.weight, "_post_accumulate_grad_hooks", None)),
            "clip": torch.nn.utils.clip_grad_norm_ is not clip,
        }

    def late_rank(self, workdir: str) -> None:
        import torch.distributed as dist
        dist.init_process_group(
            "gloo", init_method="file://" + os.path.join(workdir, "pg"),
            rank=0, world_size=1)


class MindSpore:
    prefix = "Functional"

    def __init__(self) -> None:
        import numpy as np
        import mindspore as ms
        from mindspore import Tensor, nn, ops
        ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
        ms.set_seed(0)
        from tprobe.mindspore import PrecisionDebugger
        self.ops = ops
        self.originals = (ops.sin, Tensor.__add__)
        self.Debugger = PrecisionDebugger
        self.model = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])
        self.dense = self.model[0]
        self.bias_add_class = type(self.dense.bias_add)
        self.x = Tensor(np.ones((3, 4), np.float32))
        self.grad = ms.value_and_grad(
            lambda x: ops.sin(self.model(x)).sum(), None,
            self.model.trainable_params())

    def run(self) -> None:
        self.grad(self.x)

    def other(self) -> None:
        # Nothing: MindSpore runs no kernel in a forked child (its runtime's
        # threads are not there; a call hangs), so a MindSpore child only
        # shows that its hooks went quiet.
        pass

    def patched(self) -> Dict[str, Any]:
        from mindspore import Tensor
        sin, add = self.originals
        return {
            "api": self.ops.sin is not sin,
            "tensor_api": Tensor.__add__ is not add,
            "modules": bool(self.dense._forward_pre_hook),
            "primitives": type(self.dense.bias_add) is not
            self.bias_add_class,
        }

    def late_rank(self, workdir: str) -> None:
        os.environ["RANK_ID"] = "5"


def write_config(workdir: str, name: str, **fields: Any) -> str:
    path = os.path.join(workdir, name + ".json")
    body = {"task": "statistics", "dump_path": os.path.join(workdir, "dump")}
    body.update(fields)
    with open(path, "w") as f:
        json.dump(body, f)
    return path


def configure(cli: str, path: str) -> int:
    return subprocess.run([cli, "configure", path],
                          stdout=subprocess.DEVNULL).returncode


def one_step(fw: Any, debugger: Any) -> None:
    debugger.start(fw.model)
    fw.run()
    debugger.stop()
    debugger.step()


def main(argv: List[str]) -> int:
    framework, case, workdir = argv[1:4]
    cli = argv[4] if len(argv) > 4 else ""
    fw = Torch() if framework == "torch" else MindSpore()
    seen: Dict[str, Any] = {"untouched": fw.patched()}

    if case == "l2":
        refused = []
        for kwargs in ({"config_path": write_config(workdir, "l2",
                                                    level="L2")},
                       {"config_path": write_config(workdir, "l1",
                                                    level="L1"),
                        "level": "L2"}):
            try:
                fw.Debugger(**kwargs)
                refused.append(None)
            except ValueError as error:
                refused.append(str(error))
            refused.append(fw.Debugger._instance is None)
        seen["refused"] = refused
        debugger = fw.Debugger(config_path=write_config(workdir, "mix",
                                                        level="mix"))
        seen["made"] = fw.Debugger._instance is debugger
        seen["after"] = fw.patched()
        one_step(fw, debugger)
    elif case == "rank":
        debugger = fw.Debugger(config_path=write_config(workdir, "mix",
                                                        level="mix"))
        seen["rank_before"] = debugger.session.rank
        fw.late_rank(workdir)
        one_step(fw, debugger)
        seen["rank_after"] = debugger.session.rank
    elif case == "fork":
        debugger = fw.Debugger(config_path=write_config(workdir, "mix",
                                                        level="mix"))
        debugger.start(fw.model)
        fw.run()
        child_file = os.path.join(workdir, "child.json")
        pid = os.fork()
        if pid == 0:
            # What the child's hooks did: nothing reaches its session.
            try:
                before = debugger.session.counters()
                on = debugger._rt.on
                fw.other()
                with open(child_file, "w") as f:
                    json.dump({"on": on, "before": before,
                               "after": debugger.session.counters()}, f)
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        seen["child_status"] = status
        with open(child_file) as f:
            seen["child"] = json.load(f)
        debugger.stop()
        debugger.step()
        one_step(fw, debugger)
    elif case == "end":
        debugger = fw.Debugger(config_path=write_config(
            workdir, "first", level="mix", step=[0]))
        one_step(fw, debugger)
        seen["step0"] = fw.patched()
        debugger.start(fw.model)  # step 1 > the last step: the end
        seen["ended"] = fw.patched()
        fw.run()
        debugger.stop()
        seen["configure"] = configure(cli, write_config(
            workdir, "later", level="mix", step=[3]))
        debugger.step()
        one_step(fw, debugger)  # step 2: hooks back, not recorded
        seen["back"] = fw.patched()
        one_step(fw, debugger)  # step 3: recorded
    elif case == "level":
        debugger = fw.Debugger(config_path=write_config(workdir, "l0",
                                                        level="L0"))
        debugger.start(fw.model)
        fw.run()
        debugger.stop()
        seen["l0"] = fw.patched()
        seen["configure"] = configure(cli, write_config(workdir, "mix",
                                                        level="mix"))
        debugger.step()
        seen["mix"] = fw.patched()
        one_step(fw, debugger)
    else:
        raise SystemExit(f"unknown case {case!r}")
    seen["flushed"] = fw.Debugger._instance.session.flush(30000)
    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
