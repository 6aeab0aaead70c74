"""PrecisionDebugger: msprobe's MindSpore entry point (PyNative), backed by
tprobed.

    debugger = PrecisionDebugger(config_path="config.json")
    for batch in data:
        debugger.start(net)       # a Cell, or a list of Cells
        loss, grads = grad_fn(batch)
        optimizer(grads)
        debugger.stop()
        debugger.step()

The lifecycle (singleton, rank, fork, the end of the configured steps,
live level changes) is tprobe._common.debugger's, and what the core needs
to know of MindSpore is its descriptor (tprobe.mindspore.framework); this
file says which hooks MindSpore has. A bad config (level L2 included) or
a start() with something that is not a Cell raise here, with a message;
nothing else tprobe does raises into training. API and jit hooks are
installed at construction (create the debugger before the network runs),
cell and primitive hooks at the first start() with a network. At the
first start() after the last configured step every hook is removed and
every patched function and primitive class put back, so training goes on
at full speed. At level debug, save() writes debug.json
(tprobe._common.debug_save); a tensor's gradient is kept by
Tensor.register_hook, as msprobe does, so only tensors the backward of a
value_and_grad (or grad) reaches get one.
"""

from typing import Any, List, Optional

import mindspore as ms
from mindspore import nn

from tprobe._common.debug_save import DebugSave
from tprobe._common.debugger import API_LEVELS, MODULE_LEVELS, DebuggerCore
from tprobe._common.unsupported import refuse_token_arguments
from tprobe.mindspore import framework, grad_gate
from tprobe.mindspore.api_hooks import ApiHooks
from tprobe.mindspore.cell_hooks import CellHooks
from tprobe.mindspore.jit_hooks import JitHooks
from tprobe.mindspore.primitive_hooks import PrimitiveHooks


def _cells(model: Any) -> List[nn.Cell]:
    """model as a list of Cells; TypeError for anything else."""
    models = list(model) if isinstance(model, (list, tuple)) else [model]
    if not models or not all(isinstance(m, nn.Cell) for m in models):
        raise TypeError(
            "tprobe.mindspore: start(model) takes a mindspore.nn.Cell or a "
            f"list of them, not {type(model).__name__}")
    return models


def _hook_grad(tensor: ms.Tensor, on_grad: Any) -> bool:
    """save()'s gradient hook: on_grad gets the tensor's gradient when the
    backward reaches it. Every MindSpore tensor can be hooked (there is no
    requires_grad); one outside a differentiated function never gets a
    gradient, and its entry stays null."""

    def hook(grad: ms.Tensor) -> None:
        on_grad(grad)

    tensor.register_hook(hook)
    return True


class PrecisionDebugger(DebuggerCore):
    FRAMEWORK = framework.FRAMEWORK
    _instance: Optional["PrecisionDebugger"] = None

    def __init__(self, config_path: Optional[str] = None,
                 task: Optional[str] = None, dump_path: Optional[str] = None,
                 level: Optional[str] = None,
                 step: Optional[List[Any]] = None) -> None:
        if self._ready:
            return
        self._setup(config_path, task, dump_path, level, step)

    @classmethod
    def start(cls, model: Any = None, token_range: Any = None,
              rank_id: Any = None) -> None:
        """Starts (or resumes) dumping the current step. ``model`` is a
        Cell or a list of Cells; L0 and mix need one."""
        refuse_token_arguments({"token_range": token_range,
                                "rank_id": rank_id})
        self = cls._get()
        if self is None:
            return
        if model is not None:
            _cells(model)
        self._begin(model)

    def _make_hooks(self) -> None:
        rt = self._rt
        self._cells = CellHooks(rt)
        self._apis = ApiHooks(rt)
        self._primitives = PrimitiveHooks(rt)
        self._jit = JitHooks(rt, self._apis)

    def _make_debug_save(self) -> DebugSave:
        return DebugSave(lambda value: isinstance(value, ms.Tensor),
                         _hook_grad)

    def _install(self) -> None:
        if self._rt.level in API_LEVELS and not self._apis.installed:
            self._apis.install()
            self._jit.install()

    def _hook_model(self, model: Any) -> None:
        models = _cells(model)
        if self._rt.level in MODULE_LEVELS:
            self._cells.register(models, isinstance(model, (list, tuple)))
        if self._rt.level in API_LEVELS:
            self._primitives.register(models)

    def _remove(self) -> None:
        self._jit.restore()
        self._apis.restore()
        self._primitives.restore()
        self._cells.remove()
        grad_gate.release()

    def _step_done(self) -> None:
        grad_gate.release()
