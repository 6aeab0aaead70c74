"""PrecisionDebugger: msprobe's PyTorch entry point, backed by tprobed.

    debugger = PrecisionDebugger(config_path="config.json")
    for batch in data:
        debugger.start(model)
        ...forward, backward, optimizer step...
        debugger.stop()
        debugger.step()

The lifecycle (singleton, rank, fork, the end of the configured steps,
live level changes) is tprobe._common.debugger's, and what the core needs
to know of PyTorch is its descriptor (tprobe.torch.framework); this file
says which hooks PyTorch has. A bad config raises ValueError here, with
the config's message; after construction nothing tprobe does raises into
training. API hooks (and, at level mix, the optimizer hooks) are installed
at construction (create the debugger before the model runs), module and
parameter-gradient hooks at the first start() with a model; all of them
are removed at the first start() after the last configured step. The
module and parameter-gradient hooks are out of torch's hook dicts in a
step that records nothing and back for one that records
(tprobe.torch.hook_switch).
"""

import sys
import weakref
from typing import Any, List, Optional

import torch

from tprobe import _C
from tprobe._common.debug_save import DebugSave
from tprobe._common.debugger import API_LEVELS, MODULE_LEVELS, DebuggerCore
from tprobe._common.unsupported import refuse_token_arguments, unsupported
from tprobe.torch import compiled_hooks, framework, tensor_shim, values
from tprobe.torch.api_hooks import ApiHooks
from tprobe.torch.compile_notice import CompileNotice
from tprobe.torch.grad_hooks import GradHooks, is_megatron
from tprobe.torch.module_hooks import ModuleHooks
from tprobe.torch.optimizer_hooks import OptimizerHooks


def _hook_grad(tensor: torch.Tensor, on_grad: Any) -> bool:
    """save()'s gradient hook: on_grad gets the tensor's gradient, detached,
    when the backward reaches it; False when it requires none."""
    if not tensor.requires_grad:
        return False

    def hook(grad: torch.Tensor) -> None:
        on_grad(grad.detach())

    tensor.register_hook(hook)
    return True


class PrecisionDebugger(DebuggerCore):
    FRAMEWORK = framework.FRAMEWORK
    _instance: Optional["PrecisionDebugger"] = None

    def __init__(self, config_path: Optional[str] = None,
                 task: Optional[str] = None, dump_path: Optional[str] = None,
                 level: Optional[str] = None, model: Any = None,
                 step: Optional[List[Any]] = None) -> None:
        if self._ready:
            return
        self._setup(config_path, task, dump_path, level, step, model)

    def _make_hooks(self) -> None:
        rt = self._rt
        self._grads = GradHooks(rt)
        self._modules = ModuleHooks(rt, self._grads)
        self._apis = ApiHooks(rt)
        # The model the last start() hooked (a weak reference), or None.
        self._model_hooked: Optional[weakref.ref] = None
        self._optimizer = OptimizerHooks(rt)
        self._compile_notice = CompileNotice(rt)
        _C.set_fallback(values.fallback)
        tensor_shim.use()

    def _make_debug_save(self) -> DebugSave:
        return DebugSave(lambda value: isinstance(value, torch.Tensor),
                         _hook_grad)

    def _install(self) -> None:
        level = self._rt.level
        if (level in API_LEVELS and not self._apis.installed
                and not self._modules.module_dump_on):
            self._apis.install()
        if level == "mix" and not self._optimizer.installed:
            self._optimizer.install()

    def _hook_model(self, model: Any) -> None:
        if self._model_hooked is not None and self._model_hooked() is model:
            return  # the model of the last start(), hooked already
        if self._rt.level in MODULE_LEVELS:
            self._grads.megatron = is_megatron(model)
            self._modules.register(model)
            # A list of models is walked again at each start().
            if isinstance(model, torch.nn.Module):
                self._model_hooked = weakref.ref(model)

    def _suspend(self) -> None:
        self._modules.suspend()
        compiled_hooks.recording(False)
        self._grads.switch.suspend()

    def _resume(self) -> None:
        compiled_hooks.recording(True)
        self._modules.resume()
        self._grads.switch.resume()

    def _step_done(self) -> None:
        compiled_hooks.forget()
        self._compile_notice.step()

    def _after_start(self, model: Any) -> None:
        self._compile_notice.start(model if model is not None else self.model,
                                   self._apis.installed)

    def _steady_boundaries(self, records: bool) -> Optional[tuple]:
        # compiled_hooks keeps what a recorded step of a compiled model
        # leaves, for step() to let go; of any other step, nothing.
        if records and self._modules.compiled:
            return None
        return self._compile_notice.watched()

    def _remove(self) -> None:
        self._apis.restore()
        self._optimizer.restore()
        self._modules.remove()
        self._grads.remove()
        self._model_hooked = None
        compiled_hooks.recording(True)  # as a new install's hooks start

    @classmethod
    def start(cls, model: Any = None, token_range: Any = None,
              rank_id: Any = None, scheduled_tokens: Any = None) -> None:
        self = cls._instance
        if (self is not None and token_range is None and rank_id is None
                and scheduled_tokens is None and self._steady.start(model)):
            return  # a step like the last one (SteadySteps)
        if (token_range is not None or rank_id is not None
                or scheduled_tokens is not None):
            refuse_token_arguments({"token_range": token_range,
                                    "rank_id": rank_id,
                                    "scheduled_tokens": scheduled_tokens})
        self = cls._get()
        if self is not None:
            self._begin(model)

    @classmethod
    def forward_backward_dump_end(cls) -> None:
        """msprobe's deprecated name for stop()."""
        cls.stop()

    register_custom_api = classmethod(unsupported(
        "PrecisionDebugger.register_custom_api",
        "tprobe hooks its own API list (config.json's risk_level and list "
        "select from it); dump a function of your own inside a module with "
        "module_dump"))
    restore_custom_api = classmethod(unsupported(
        "PrecisionDebugger.restore_custom_api",
        "tprobe registers no custom API (see register_custom_api)"))

    def _module_dump(self, module: Any, name: str) -> None:
        self._steady.disarm()
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"module_dump: module must be a torch.nn.Module, "
                            f"got {type(module).__name__}")
        if not isinstance(name, str):
            raise TypeError(f"module_dump: dump_name must be a str, got "
                            f"{name!r}")
        self._grads.megatron = is_megatron(module)
        self._model_hooked = None  # the next start() sets megatron again
        if not self._modules.register_one(module, name):
            sys.stderr.write("[tprobe] module_dump: the module is hooked "
                             "already (start() with its model); it is "
                             "dumped as part of that model\n")
            return
        # As in msprobe: inside the module no API is recorded.
        self._apis.restore()
        self._modules.module_dump_on = True

    def _module_dump_end(self) -> None:
        self._steady.disarm()
        self._modules.module_dump_on = False
        if self._hooked:
            self._install()  # API hooks are back for L1 and mix

def module_dump(module: Any, dump_name: str) -> None:
    """Dumps ``module`` alone as ``Module.{dump_name}.{Class}`` until
    module_dump_end(); its children and the APIs it calls are not recorded
    (msprobe's module_dump). REQUIRES: a PrecisionDebugger exists."""
    PrecisionDebugger._require("module_dump")._module_dump(module, dump_name)


def module_dump_end() -> None:
    """Ends module_dump(); API hooks are back for levels L1 and mix."""
    PrecisionDebugger._require("module_dump_end")._module_dump_end()
