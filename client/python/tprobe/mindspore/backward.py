"""One call's backward entry (a cell's or an API's), from the two halves
grad_gate reports: the gradients of the outputs, then of the inputs. It is
also the call's gates (tprobe._C.ApiWrapper's gates_for): inputs() before
the call, outputs() after it.

A cell's backward call is opened in the client core when its output
gradients arrive and closed when its input gradients do, so the calls in
between are its children in construct.json (msprobe's backward pre-hook
and hook). The entry is written when the input gradients arrive, or at
once when the call had no differentiable input.
"""

from typing import Any, Optional

from tprobe._common.runtime import Runtime
from tprobe.mindspore import grad_gate


class Backward:
    __slots__ = ("rt", "base", "index", "cell", "name", "owner",
                 "grad_outputs", "handle", "gate", "dict_output")

    def __init__(self, rt: Runtime, base: str, index: int,
                 cell: Any = None) -> None:
        """`cell`: the Cell whose call this is (None: an API's)."""
        self.rt = rt
        self.base = base
        self.index = index
        self.cell = cell is not None
        self.owner = cell
        # The gates' name, as msprobe names its backward hooks.
        self.name = (f"{base}.backward.{index}" if self.cell
                     else f"{base}.{index}.backward")
        self.grad_outputs: Optional[list] = None
        self.handle: Any = None  # from Session.module_backward_begin
        # The grad_gate.CallGate of the call, when it had a differentiable
        # input: the entry is then written when it reports.
        self.gate: Any = None
        # Whether the call returned a dict (its output gate never fires).
        self.dict_output = False

    def inputs(self, args: tuple) -> tuple:
        """The call's inputs through a gate; as they are when none of them
        can get a gradient (the entry is then written with output [])."""
        if not grad_gate.differentiable(args):
            return args
        self.gate = grad_gate.CallGate(self.name, self.owner, self.on_grads)
        return self.gate.inputs(args)

    def outputs(self, out: Any) -> Any:
        """The call's output through its gates."""
        self.dict_output = isinstance(out, dict)
        if self.gate is not None:
            out = self.gate.outputs(out)
        return grad_gate.gate_outputs(self.name, self.owner, out,
                                      self.on_output_grads)

    def on_output_grads(self, grads: Any) -> None:
        rt = self.rt
        local = rt.local
        local.busy += 1
        try:
            self.grad_outputs = list(grads)
            session = rt.session
            if self.cell:
                self.handle = session.module_backward_begin(self.base,
                                                            self.index)
            if self.gate is None:
                self._write([])
        except Exception as error:  # noqa: BLE001
            rt.warn_once("a backward hook", error)
        finally:
            local.busy -= 1

    def on_grads(self, grad_outputs: Any, grad_inputs: Any) -> None:
        rt = self.rt
        local = rt.local
        local.busy += 1
        try:
            if self.cell and self.dict_output and self.grad_outputs is None:
                self._write_without_node(list(grad_inputs),
                                         list(grad_outputs))
                return
            self.grad_outputs = list(grad_outputs)
            self._write(list(grad_inputs))
        except Exception as error:  # noqa: BLE001
            rt.warn_once("a backward hook", error)
        finally:
            local.busy -= 1

    def _write_without_node(self, first: list, second: list) -> None:
        """The entry of a cell whose output gate never fired: MindSpore
        fires none on a dict output, and hands the call gate's hook the
        gradients of the inputs second (None first). msprobe 26.2 writes
        the entry as ``input`` = first, ``output`` = second, with no
        construct.json node: so does this."""
        session = self.rt.session
        mode = session.data_mode
        if not mode["backward"]:
            return
        body = {}
        if mode["input"]:
            body["input"] = first
        if mode["output"]:
            body["output"] = second
        session.record_entry(f"{self.base}.backward.{self.index}", None,
                             body)

    def _write(self, grad_inputs: list) -> None:
        session = self.rt.session
        grad_outputs = self.grad_outputs or []
        if self.cell:
            handle, self.handle = self.handle, None
            session.module_backward_end(handle, grad_outputs, grad_inputs)
        else:
            session.api_backward(self.base, self.index, grad_outputs,
                                 grad_inputs)
