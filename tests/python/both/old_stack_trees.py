"""A MindSpore and a PyTorch dump whose stack.json has msprobe 8.x's older
form, {entry: [line, ...]}, shaped as msprobe's own layer-mapping fixture
(test/resources/layer_mapping in msprobe's repository, a PanGu model):
msprobe's layer mapping puts an API under the framework function that
called it, which only that form gives it.

- MindSpore: Tensor.__getitem__ calls Tensor.__add__.0 for the user (its
  stack: the API wrapper, then MindSpore's tensor.py, then user code), so
  its scope is TopLayer.__getitem__.__add__; Tensor.__add__.1 comes from
  user code (TopLayer.__add__). PyTorch's Tensor.__add__.0 and .1 both
  come from user code. So MindSpore's __add__.1 pairs with PyTorch's
  __add__.0 and its __add__.0 with nothing.
- Inside the cell/module `block`: Tensor.__mul__.0, called by the
  framework's `norm` (scope block.norm.__mul__ on both sides), the tanh of
  each framework and Tensor.__add__.2; a primitive (MindSpore's
  Primitive.add.Add), whose stack msprobe never reads.
- Backward calls of tanh, __mul__, the cell and __add__ (MindSpore: of
  __add__.1 only; PyTorch: of both).

write_pair(root, form) writes root/mindspore/step0/rank and
root/pytorch/step0/rank with dump.json (task statistics), construct.json
and stack.json in `form`: "named" (8.x) or "indexed" (26.x's
{"0": [[entry, ...], [line, ...]]}).
"""

import json
import os
from typing import Dict, List, Optional, Tuple

MS_WRAPPER = ("File /pkg/msprobe/mindspore/dump/hook_cell/wrap_api.py, "
              "line 98, in api_function, \n return ApiTemplate(api_name, "
              "api_dict, prefix, hook)(*args, **kwargs)")
PT_WRAPPER = ("File /pkg/msprobe/pytorch/hook_module/wrap_tensor.py, line "
              "61, in tensor_op_template, \n return TensorOPTemplate(op_name, "
              "hook)(*args, **kwargs)")


def line(path: str, number: int, func: str, code: str) -> str:
    return f"File {path}, line {number}, in {func}, \n {code}"


MS_CELL = [line("/pkg/site-packages/mindspore/nn/cell.py", 505,
                "_run_construct", "output = self._run_forward_hook(i, o)"),
           line("/pkg/site-packages/mindspore/nn/cell.py", 733, "__call__",
                "return self._run_construct(*args, **kwargs)")]
MS_USER = [line("/net/utils.py", 78, "get_masks", "mask[b, 0] = 0"),
           line("/net/train.py", 113, "get_batch", "m = get_masks(d)")]
MS_IN_BLOCK = [line("/net/model.py", 40, "construct", "y = self.act(x)"),
               line("/net/train.py", 120, "train", "loss = net(x)")]
PT_USER = [line("/net/utils.py", 176, "get_masks", "mask[b, 0] = 0"),
           line("/net/train.py", 174, "get_batch", "m = get_masks(d)")]
PT_IN_BLOCK = [line("/net/model.py", 40, "forward", "y = self.act(x)"),
               line("/net/train.py", 120, "train", "loss = net(x)")]

# (entry, parent in construct.json, stack lines or None, inputs, outputs)
Entry = Tuple[str, Optional[str], Optional[List[str]], int, int]


def mindspore_entries() -> List[Entry]:
    block = "Cell.block.Block.forward.0"
    getitem = [line("/pkg/site-packages/mindspore/ops/_compile_utils.py",
                    487, "format_index_tensor", "return F.select(i, j, k)"),
               line("/pkg/site-packages/mindspore/common/tensor.py", 483,
                    "__getitem__", "out = getitem(self, index)")]
    norm = [line("/pkg/site-packages/mindspore/ops/function/math_func.py",
                 610, "norm", "return x * x")]
    return [
        ("Tensor.__add__.0.forward", None,
         MS_CELL + [MS_WRAPPER] + getitem + MS_USER, 2, 1),
        ("Tensor.__add__.1.forward", None, MS_CELL + [MS_WRAPPER] + MS_USER,
         2, 1),
        (block, None, [line("/net/train.py", 120, "train", "net(x)")], 1, 1),
        ("Tensor.__mul__.0.forward", block,
         MS_CELL + [MS_WRAPPER] + norm + MS_IN_BLOCK, 2, 1),
        ("Mint.tanh.0.forward", block, [MS_WRAPPER] + MS_IN_BLOCK, 1, 1),
        ("Primitive.add.Add.0.forward", block, getitem + MS_IN_BLOCK, 2, 1),
        ("Tensor.__add__.2.forward", block, [MS_WRAPPER] + MS_IN_BLOCK, 2, 1),
        ("Mint.tanh.0.backward", None, None, 1, 1),
        ("Tensor.__mul__.0.backward", None, None, 1, 2),
        ("Cell.block.Block.backward.0", None, None, 1, 1),
        ("Tensor.__add__.1.backward", None, None, 1, 2),
    ]


def pytorch_entries() -> List[Entry]:
    block = "Module.block.Block.forward.0"
    norm = [line("/pkg/site-packages/torch/functional.py", 1630, "norm",
                 "return x * x")]
    return [
        ("Tensor.__add__.0.forward", None, [PT_WRAPPER] + PT_USER, 2, 1),
        ("Tensor.__add__.1.forward", None, [PT_WRAPPER] + PT_USER, 2, 1),
        (block, None, [line("/net/train.py", 120, "train", "net(x)")], 1, 1),
        ("Tensor.__mul__.0.forward", block, [PT_WRAPPER] + norm + PT_IN_BLOCK,
         2, 1),
        ("Torch.tanh.0.forward", block, [PT_WRAPPER] + PT_IN_BLOCK, 1, 1),
        ("Tensor.__add__.2.forward", block, [PT_WRAPPER] + PT_IN_BLOCK, 2, 1),
        ("Torch.tanh.0.backward", None, None, 1, 1),
        ("Tensor.__mul__.0.backward", None, None, 1, 2),
        ("Module.block.Block.backward.0", None, None, 1, 1),
        ("Tensor.__add__.1.backward", None, None, 1, 2),
        ("Tensor.__add__.0.backward", None, None, 1, 2),
    ]


def tensor(framework: str, seed: int) -> Dict[str, object]:
    value = 0.25 * (seed % 7) + 0.5
    return {
        "type": "mindspore.Tensor" if framework == "mindspore"
        else "torch.Tensor",
        "dtype": "Float32" if framework == "mindspore" else "torch.float32",
        "shape": [4], "Max": value, "Min": -value, "Mean": value / 4,
        "Norm": value * 2}


def write_rank(rank: str, framework: str, entries: List[Entry],
               form: str) -> None:
    os.makedirs(rank, exist_ok=True)
    data, construct = {}, {}
    named: Dict[str, List[str]] = {}
    for i, (name, parent, stack, n_in, n_out) in enumerate(entries):
        inputs = [tensor(framework, i + k) for k in range(n_in)]
        outputs = [tensor(framework, i + 3 + k) for k in range(n_out)]
        if ".backward" in name:
            data[name] = {"input": inputs, "output": outputs}
        else:
            data[name] = {"input_args": inputs, "input_kwargs": {},
                          "output": outputs}
        construct[name] = parent
        if stack is not None:
            named[name] = stack
    if form == "named":
        stacks: Dict[str, object] = dict(named)
    else:
        stacks = {str(i): [[name], lines]
                  for i, (name, lines) in enumerate(named.items())}
    for file, content in (("dump.json", {"task": "statistics",
                                         "level": "mix",
                                         "framework": framework,
                                         "dump_data_dir": None,
                                         "data": data}),
                          ("construct.json", construct),
                          ("stack.json", stacks)):
        with open(os.path.join(rank, file), "w", encoding="utf-8") as f:
            json.dump(content, f, indent=1)


def write_pair(root: str, form: str) -> Tuple[str, str]:
    """The MindSpore (target) and PyTorch (baseline) step folders."""
    steps = []
    for framework, entries in (("mindspore", mindspore_entries()),
                               ("pytorch", pytorch_entries())):
        step = os.path.join(root, framework, "step0")
        write_rank(os.path.join(step, "rank"), framework, entries, form)
        steps.append(step)
    return steps[0], steps[1]
