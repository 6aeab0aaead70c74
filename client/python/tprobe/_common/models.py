"""Walking the models given to start(): which submodules (cells) get
hooks and under which path, as msprobe names them."""

import weakref
from typing import Any, Callable, Iterable, Iterator, List, Tuple


def new_submodules(models: List[Any], many: bool, seen: weakref.WeakSet,
                   kind: type,
                   named: Callable[[Any], Iterable[Tuple[str, Any]]]
                   ) -> Iterator[Tuple[str, Any]]:
    """(path, submodule) for every submodule of each model of type `kind`
    not in `seen` (which it is then added to); `named(model)` lists a
    model's (path, submodule) pairs, the model itself first. The models
    themselves are skipped, as msprobe skips them; the paths of a list of
    models (`many`) start with the model's index in the list."""
    for i, root in enumerate(models):
        if not isinstance(root, kind) or root in seen:
            continue
        seen.add(root)
        for path, sub in named(root):
            if sub is not root:
                yield (f"{i}.{path}" if many else path), sub
