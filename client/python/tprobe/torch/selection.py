"""Which calls are dumped, and which of their data: msprobe's ``scope``,
``list`` and ``data_mode`` (reference/msprobe-format.md, section 6.2).

- ``list``: a call is dumped when one of the strings is a substring of its
  full name. In mix, APIs called inside a dumped module are dumped too.
- ``scope`` = [start, end]: calls are dumped from the one named ``start`` to
  the one named ``end``, both included, in call order; APIs inside a module in
  range are in range. A backward entry is dumped when its forward was.
- ``data_mode``: forward/backward and input/output filters of the keys.

Call indices count every call, dumped or not (msprobe counts before its
filter), so names never depend on the selection.
"""

from typing import Any, Dict, List, Set


class Selection:
    def __init__(self, session: Any) -> None:
        self.names: List[str] = list(session.list)
        scope = list(session.scope)
        self.scope_start = scope[0] if len(scope) == 2 else None
        self.scope_end = scope[1] if len(scope) == 2 else None
        mode: Dict[str, bool] = session.data_mode
        self.forward = mode["forward"]
        self.backward = mode["backward"]
        self.input = mode["input"]
        self.output = mode["output"]
        # True when every call is dumped: the hot path skips the checks.
        self.everything = not self.names and self.scope_start is None
        self._in_range = False
        self._selected_forward: Set[str] = set()

    def reset_step(self) -> None:
        self._in_range = False
        self._selected_forward.clear()

    def forward_selected(self, name: str,
                         inside_selected: bool = False) -> bool:
        """Whether forward call ``name`` is dumped; ``inside_selected`` says
        it runs inside a module that is."""
        if self.everything:
            return True
        selected = inside_selected or self._match(name)
        if selected:
            self._selected_forward.add(name)
        return selected

    def backward_selected(self, forward_name: str, backward_name: str) -> bool:
        if self.everything:
            return True
        return (forward_name in self._selected_forward
                or any(s in backward_name for s in self.names))

    def _match(self, name: str) -> bool:
        if self.scope_start is not None:
            if name == self.scope_start:
                self._in_range = True
            if self._in_range:
                if name == self.scope_end:
                    self._in_range = False
                return not self.names or any(s in name for s in self.names)
            return False
        return any(s in name for s in self.names)

    def forward_body(self, body: Dict[str, Any], inputs: List[str],
                     outputs: List[str]) -> Dict[str, Any]:
        """Removes the input or output keys that data_mode filters out."""
        if not (self.forward and self.input):
            for key in inputs:
                body.pop(key, None)
        if not (self.forward and self.output):
            for key in outputs:
                body.pop(key, None)
        return body

    def backward_body(self, body: Dict[str, Any]) -> Dict[str, Any]:
        if not self.input:
            body.pop("input", None)
        if not self.output:
            body.pop("output", None)
        return body
