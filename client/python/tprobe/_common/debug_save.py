"""PrecisionDebugger.save() at level "debug": msprobe's single-point saving,
written by the daemon as step{N}/rank{R}/debug.json.

- save(variable, name) writes the entry "{name}.{count}.debug", count
  numbering the saves of `name` in the step (from 0 at each step), whose
  value is the variable encoded as a dump.json value: a tensor object, a
  list (tuple) or dict of them, {"type", "value"} for a scalar or string.
- With save_backward, "{name}_grad.{count}.debug" follows it at once: the
  same nesting with null where there is no gradient (a scalar, a tensor
  without requires_grad, one the backward never reaches). A gradient hook
  on each tensor that requires grad keeps its gradient when the backward
  runs; at step() (or when the debugger closes) the entry is written again
  with those gradients, in its place (the daemon merges an entry written
  twice in place).
- Only the steps and ranks the config selects are saved; start() is not
  needed, as in msprobe.
- A call msprobe's check_save_param refuses is skipped with a warning, as
  msprobe skips it: a variable other than a tensor, int, float or str, or
  lists, tuples and str-keyed dicts of them (at most MAX_DEPTH deep); a name
  that is not a str; a save_backward that is not a bool.

The framework gives how to tell a tensor and how to hook its gradient.
Nothing here raises into training: the debugger reports failures once.
"""

from collections import defaultdict
from typing import Any, Callable, DefaultDict, List, Optional, Tuple

# The entry member that holds a debug entry's value (the daemon writes the
# value bare, common/dump/tree.h, and names its tensor files without a
# category, daemon/output/entry_renderer.h).
MEMBER = ""

# msprobe's Const.DUMP_MAX_DEPTH: how deep a saved variable may nest.
MAX_DEPTH = 400


class _Slot:
    """Where the gradient of one saved tensor lands."""

    __slots__ = ("grad",)

    def __init__(self) -> None:
        self.grad: Any = None


class DebugSave:
    """The save() state of one debugger: counts of the current step and the
    gradient entries still to be written."""

    def __init__(self, is_tensor: Callable[[Any], bool],
                 hook_grad: Callable[[Any, Callable[[Any], None]], bool]):
        # is_tensor(value); hook_grad(tensor, on_grad): registers on_grad
        # for the tensor's gradient, False when it has none to come.
        self._is_tensor = is_tensor
        self._hook_grad = hook_grad
        self._step: Optional[int] = None
        self._counts: DefaultDict[str, int] = defaultdict(int)
        # (entry name, step, slot tree)
        self._pending: List[Tuple[str, int, Any]] = []

    def refusal(self, variable: Any, name: Any,
                save_backward: Any) -> Optional[str]:
        """Why msprobe's check_save_param skips this save(), or None."""
        if not self._valid(variable, 0):
            return ("variable must be a tensor, int, float or str, or "
                    "lists, tuples and str-keyed dicts of them; got "
                    f"{type(variable).__name__}")
        if not isinstance(name, str):
            return f"name must be a str, got {name!r}"
        if not isinstance(save_backward, bool):
            return f"save_backward must be a bool, got {save_backward!r}"
        return None

    def _valid(self, value: Any, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False
        if self._is_tensor(value) or isinstance(value, (int, float, str)):
            return True
        if isinstance(value, (list, tuple)):
            return all(self._valid(v, depth + 1) for v in value)
        if isinstance(value, dict):
            return all(isinstance(k, str) and self._valid(v, depth + 1)
                       for k, v in value.items())
        return False

    def save(self, session: Any, variable: Any, name: str,
             save_backward: bool) -> None:
        step = session.current_step
        if not session.selects(step):
            return
        if step != self._step:
            self._step = step
            self._counts.clear()
        count = self._counts[name]
        self._counts[name] += 1
        session.record_entry(f"{name}.{count}.debug", None,
                             {MEMBER: session.encode(variable)}, step)
        if not save_backward:
            return
        grad_name = f"{name}_grad.{count}.debug"
        slots, hooked = self._slots(variable)
        session.record_entry(grad_name, None,
                             {MEMBER: session.encode(_grads(slots))}, step)
        if hooked:
            self._pending.append((grad_name, step, slots))

    def flush(self, session: Any) -> None:
        """Writes the gradient entries whose backward ran."""
        pending, self._pending = self._pending, []
        for name, step, slots in pending:
            if _any_grad(slots):
                session.record_entry(name, None,
                                     {MEMBER: session.encode(_grads(slots))},
                                     step)

    def _slots(self, value: Any) -> Tuple[Any, bool]:
        """The nesting of `value` with a _Slot for each tensor whose
        gradient was hooked, None elsewhere; and whether any was."""
        if self._is_tensor(value):
            slot = _Slot()

            def on_grad(grad: Any) -> None:
                slot.grad = grad

            return (slot, True) if self._hook_grad(value, on_grad) else (
                None, False)
        if isinstance(value, (list, tuple)):
            items = [self._slots(item) for item in value]
            return [s for s, _ in items], any(h for _, h in items)
        if isinstance(value, dict):
            items = {k: self._slots(v) for k, v in value.items()}
            return ({k: s for k, (s, _) in items.items()},
                    any(h for _, h in items.values()))
        return None, False


def _grads(slots: Any) -> Any:
    if isinstance(slots, _Slot):
        return slots.grad
    if isinstance(slots, list):
        return [_grads(s) for s in slots]
    if isinstance(slots, dict):
        return {k: _grads(s) for k, s in slots.items()}
    return None


def _any_grad(slots: Any) -> bool:
    if isinstance(slots, _Slot):
        return slots.grad is not None
    if isinstance(slots, list):
        return any(_any_grad(s) for s in slots)
    if isinstance(slots, dict):
        return any(_any_grad(s) for s in slots.values())
    return False
