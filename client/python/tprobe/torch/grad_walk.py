"""The walk through a module's arguments and output that finds the tensors
of its backward entry, and puts their aliases back in their places, shared
by the eager hooks (tprobe.torch.module_hooks) and those traced into a
compiled graph (tprobe.torch.compiled_hooks).

msprobe 26.x lists a backward entry's items depth first through tuples
(namedtuples included), lists and dicts (a dict's values in order: a
HuggingFace ModelOutput's set fields), one item per tensor that needs a
gradient; other objects (a plain dataclass) are not entered.
"""

from typing import Any, Iterator, List

import torch

_Tensor = torch.Tensor
# How deep the walk goes into nested containers (msprobe stops at 400 with
# an error; a structure that deep is cut off here, the rest left unaliased).
MAX_DEPTH = 400
CONTAINERS = (tuple, list, dict)


def grad_tensors(item: Any, found: List[_Tensor], depth: int) -> None:
    """Appends to ``found`` the tensors in ``item`` that need a gradient,
    in msprobe's order: one item per such tensor, so a bool mask beside
    them gets no slot."""
    if isinstance(item, _Tensor):
        if item.requires_grad:
            found.append(item)
    elif depth < MAX_DEPTH:
        if isinstance(item, (tuple, list)):
            for value in item:
                grad_tensors(value, found, depth + 1)
        elif isinstance(item, dict):
            for value in item.values():
                grad_tensors(value, found, depth + 1)


def replace(item: Any, aliases: Iterator[_Tensor], depth: int) -> Any:
    """``item`` with each tensor that grad_tensors found replaced by the
    next of ``aliases``, walked in the same order. A tuple that holds one
    is rebuilt with its type (a namedtuple through its fields); a list or a
    dict is changed in place, as msprobe does (a forward that appends to a
    list argument is seen by its caller; a ModelOutput mirrors its items in
    its attributes); a container without one is returned as it is."""
    if isinstance(item, _Tensor):
        return next(aliases) if item.requires_grad else item
    if depth >= MAX_DEPTH:
        return item
    if isinstance(item, (tuple, list)):
        items = [replace(value, aliases, depth + 1) for value in item]
        if all(new is old for new, old in zip(items, item)):
            return item
        if isinstance(item, list):
            item[:] = items
            return item
        kind = type(item)
        if kind is tuple:
            return tuple(items)
        if hasattr(item, "_fields"):  # a namedtuple
            return kind(*items)
        return kind(items)  # e.g. torch.return_types
    if isinstance(item, dict):
        for key, value in list(item.items()):
            new = replace(value, aliases, depth + 1)
            if new is not value:
                item[key] = new
    return item
