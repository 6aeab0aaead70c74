"""Hook suspension: tprobe's module and parameter-gradient hooks out of
torch's hook dicts, and its module call wrappers out of their modules, for
the steps that record nothing, and back in where they were for the steps
that record.

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

import weakref
from typing import Any, Callable, Dict, Iterable, List, Tuple

from tprobe._C import ModuleWrapper

# Where Module.__call__ finds a module call wrapper (PyTorch >= 2.1).
CALL_IMPL = "_compiled_call_impl"
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


class WrapperSwitch:
    """The module call wrappers (tprobe.torch.module_hooks), each set as
    its module's ``_compiled_call_impl``: deleted there for the steps that
    record nothing (Module.__call__ then takes torch's path, which runs
    forward alone when the module has no hooks) and made anew at resume()
    by ``make(module, hook)``. The modules are held weakly, each with its
    hook object, which must not hold the module: a model the trainer drops
    is freed, suspended or not."""

    def __init__(self, make: Callable[[Any, Any], Any]) -> None:
        self.suspended = False
        self._make = make
        self._hooks: "weakref.WeakKeyDictionary[Any, Any]" = \
            weakref.WeakKeyDictionary()

    def add(self, module: Any, hook: Any) -> None:
        """Wraps ``module``'s calls in ``hook``'s wrapper (while suspended,
        at resume())."""
        self._hooks[module] = hook
        if not self.suspended:
            vars(module)[CALL_IMPL] = self._make(module, hook)

    def items(self) -> List[Tuple[Any, Any]]:
        """The wrapped modules, each with its hook object."""
        return list(self._hooks.items())

    def suspend(self) -> None:
        if not self.suspended:
            self.suspended = True
            self._take(self._hooks.keys())

    def resume(self) -> None:
        if not self.suspended:
            return
        self.suspended = False
        for module, hook in list(self._hooks.items()):
            own = vars(module)
            if own.get(CALL_IMPL) is None:
                own[CALL_IMPL] = self._make(module, hook)

    def remove(self) -> None:
        """Takes every wrapper out for good."""
        self._take(self._hooks.keys())
        self._hooks = weakref.WeakKeyDictionary()
        self.suspended = False

    @staticmethod
    def _take(modules: Iterable[Any]) -> None:
        for module in list(modules):
            own = vars(module)
            if isinstance(own.get(CALL_IMPL), ModuleWrapper):
                del own[CALL_IMPL]
