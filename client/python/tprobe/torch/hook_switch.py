"""Hook suspension: tprobe's module and parameter-gradient hooks out of
torch's hook dicts for the steps that record nothing, and back in where
they were for the steps that record.

A hook that returns at once still costs its Python call, and a module with
any hook leaves torch's fast path of Module.__call__ (which runs forward
alone when every hook dict is empty). So at a start() whose step does not
record, the debugger takes its hooks out of the dicts they are in (a
module's _forward_pre_hooks, _forward_hooks and their with_kwargs and
always_call sets, a parameter's _post_accumulate_grad_hooks or
_backward_hooks, an AccumulateGrad node's hooks); at the next start()
whose step records (the config's, a live config's or a live directive's)
it puts them back.

The work is on the RemovableHandles, whatever the hooks are: a handle names
its dicts (hooks_dict_ref; extra_dict_ref on PyTorch 2.x) and its key (id).
Each dict's order is kept as it was, relative to other hooks (the user's,
a library's) in it: a hook registered while tprobe's were out comes after
them, or before them when it went in front (prepend=True), as it would
have with tprobe's hooks in; a hook removed meanwhile stays out.

Thread safety: the training thread only (start(), and register() from it).
"""

from typing import Any, Dict, Iterable, List, Tuple

# One dict's suspension: the dict, its keys in order before, and the hooks
# taken out of it by key.
_Taken = Tuple[Dict[Any, Any], List[Any], Dict[Any, Any]]


class HookSwitch:
    """The RemovableHandles of one kind of tprobe's hooks (module or
    parameter-gradient), which it takes out and puts back as a whole."""

    def __init__(self) -> None:
        self.suspended = False
        self._handles: List[Any] = []
        self._taken: List[_Taken] = []

    def add(self, handles: Iterable[Any]) -> None:
        """Keeps newly registered hooks' handles; out at once while
        suspended (back at resume())."""
        handles = tuple(handles)
        self._handles.extend(handles)
        if self.suspended:
            self._take(handles)

    def suspend(self) -> None:
        """Takes every hook out; a no-op while suspended."""
        if not self.suspended:
            self.suspended = True
            self._take(self._handles)

    def _take(self, handles: Iterable[Any]) -> None:
        by_dict: Dict[int, _Taken] = {}
        for handle in handles:
            key = handle.id
            refs = (handle.hooks_dict_ref,) + tuple(
                getattr(handle, "extra_dict_ref", ()))
            for ref in refs:
                hooks = ref()
                if hooks is None or key not in hooks:
                    continue
                taken = by_dict.get(id(hooks))
                if taken is None:
                    taken = by_dict[id(hooks)] = (hooks, list(hooks), {})
                taken[2][key] = hooks.pop(key)
        self._taken.extend(by_dict.values())

    def resume(self) -> None:
        """Puts every hook taken out back in its place; a no-op unless
        suspended."""
        if not self.suspended:
            return
        self.suspended = False
        # Last taken first: each dict goes back to the order it had.
        for hooks, order, taken in reversed(self._taken):
            _put_back(hooks, order, taken)
        self._taken.clear()

    def remove(self) -> None:
        """Removes every hook (those taken out are dropped)."""
        self.suspended = False
        self._taken.clear()
        for handle in self._handles:
            handle.remove()
        self._handles.clear()


def _put_back(hooks: Dict[Any, Any], order: List[Any],
              taken: Dict[Any, Any]) -> None:
    position = {key: i for i, key in enumerate(order)}
    pending = sorted(taken, key=position.__getitem__)
    rebuilt: List[Tuple[Any, Any]] = []
    done = 0  # pending[:done] are in rebuilt
    # A hook registered while suspended is in front of every hook that was
    # there before (prepended) or behind all of them (appended, and so
    # when none of them is left).
    front = any(key in position for key in hooks)
    for key, hook in hooks.items():
        where = position.get(key)
        if where is not None:
            front = False
            while done < len(pending) and position[pending[done]] < where:
                rebuilt.append((pending[done], taken[pending[done]]))
                done += 1
        elif not front:
            rebuilt.extend((k, taken[k]) for k in pending[done:])
            done = len(pending)
        rebuilt.append((key, hook))
    rebuilt.extend((k, taken[k]) for k in pending[done:])
    hooks.clear()
    hooks.update(rebuilt)
