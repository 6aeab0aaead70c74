"""Module hooks (levels L0 and mix).

Forward: a pre-hook opens the call in the client core (which names it
``Module.{path}.{Class}.forward.{N}``, counts it, applies the filters and
opens its construct node) and hands over its stack and input_args; a
post-hook hands over output and parameters and closes the call. As in
msprobe 26.x the inputs are read in the pre-hook, so an in-place module
shows its inputs before the change, and the entry, completed by the
post-hook, ends up after its children's. On PyTorch 2.x the hooks take the
keyword arguments too (``with_kwargs=True``) and they become input_kwargs;
PyTorch 1.13 hands module hooks no kwargs, so input_kwargs is {} there, as
in msprobe.

Backward: ``Module.{path}.{Class}.backward.{N}`` (same N as the forward),
begun when the gradients of its outputs arrive and ended when its own are
computed, so the backward calls in between are inside it (construct.json
parents, list ranges),
with ``input`` = gradients w.r.t. the forward outputs and ``output`` =
gradients w.r.t. the forward's positional arguments, one item per tensor
that needs a gradient (null where none reached it, as c_n of an nn.LSTM),
as msprobe 26.x lists them: depth first through tuples (namedtuples
included), lists and dicts (a dict's values in order: a HuggingFace
ModelOutput's set fields), nested in each other at any depth, so
``(out, (h_n, c_n))`` has three items and a bool mask beside them none.
Anything else is not entered: a plain dataclass output, or a tensor in one,
gets no item (a module with nothing else gets no backward entry), as in
msprobe. The gradients are taken by an identity autograd node around the
output tensors (it runs when the module's backward starts) and one around
the argument tensors (it runs when the module's backward is done); the
tuples around them are rebuilt with their types (a namedtuple through its
fields), lists and dicts changed in place, as msprobe does (a forward that
appends to a list argument is seen by its caller; a ModelOutput mirrors
its items in its attributes). Unlike register_full_backward_hook, whose
outputs are views created by a custom Function, these nodes return plain
aliases, so code that later changes a module's output in place (``out +=
x``) keeps working. Modules with ``inplace=True`` get no backward entry:
their input would be changed through the alias (msprobe misses these
too).

A forward that raises: on PyTorch >= 2.1 the forward hook is registered
with ``always_call`` and runs anyway, with no output; the call then ends
without an entry, so the calls after it are not taken for its children.
(Before 2.1 no hook runs and the call stays open until the step ends.)

Cost per call: one hook object per module holds what its calls share, and
its eager path runs in C++ (tprobe._C.ModuleHookBase, client/python/
binding/module_hook.h), with one tprobe._C.ModuleCall per call carrying
the backward state; Python runs only for inputs and outputs other than
lone tensors (_wrap). _Alias goes through torch's C++ Function.apply and
its backward node runs the backward directly. On PyTorch >= 2.1 a module
with no other hook is called through tprobe._C.ModuleWrapper, its
_compiled_call_impl, which runs the eager pre- and post-hook around
_call_impl without torch's hook loop and with no Python frame
(_wrappable; docs/pytorch.md).

Under torch.compile at level L0 (where torch.library has register_fake,
as torch 2.13 does) a hook that Dynamo traces hands the call to
tprobe.torch.compiled_hooks, which puts it into the graph as custom ops
whose kernels call begin(), take() and end() below, with no graph break;
elsewhere the hooks are kept out of Dynamo (torch.compiler.disable) and
run eagerly, with a graph break each.
"""

import inspect
import os
import sys
import weakref
from typing import Any, Callable, Iterator, List, Optional, Sequence

import torch

from tprobe._C import (AliasForward, ModuleHookBase, ModuleWrapper, Session,
                       alias_backward, set_module_hook_tools)
from tprobe._common.models import new_submodules
from tprobe._common.runtime import Runtime
from tprobe.torch import compiled_hooks
from tprobe.torch.grad_hooks import GradHooks
from tprobe.torch.grad_walk import CONTAINERS, grad_tensors, replace
from tprobe.torch.hook_switch import CALL_IMPL, HookSwitch, WrapperSwitch

_Tensor = torch.Tensor
_detach = torch.Tensor.detach
# PyTorch 2.x hands module hooks the keyword arguments (input_kwargs).
_WITH_KWARGS = "with_kwargs" in inspect.signature(
    torch.nn.Module.register_forward_pre_hook).parameters
# PyTorch >= 2.1: forward hooks that also run when the forward raises.
_ALWAYS_CALL = "always_call" in inspect.signature(
    torch.nn.Module.register_forward_hook).parameters
# PyTorch >= 2.1: keeps Dynamo out of a function (None before).
_DISABLE_DYNAMO = getattr(getattr(torch, "compiler", None), "disable", None)
# PyTorch >= 2.0: whether functorch transforms (vmap, grad) are active.
_FUNCTORCH_ACTIVE = getattr(torch._C, "_are_functorch_transforms_active",
                            None)
# PyTorch >= 2.1: Module.__call__ calls a module's _compiled_call_impl, when
# set, in place of _call_impl: where the module call wrapper goes
# (TPROBE_MODULE_WRAPPER=0 keeps torch's hook path everywhere).
_WRAPS = CALL_IMPL in vars(torch.nn.Module) and \
    os.environ.get("TPROBE_MODULE_WRAPPER", "1") != "0"
_GLOBAL_HOOKS = tuple(
    getattr(sys.modules[torch.nn.Module.__module__], name, None) for name in
    ("_global_forward_pre_hooks", "_global_forward_hooks",
     "_global_backward_pre_hooks", "_global_backward_hooks"))
# Whether the hooks trace into compiled graphs (tprobe.torch.compiled_hooks),
# and Dynamo's "am I tracing" (a constant True while it traces a hook).
_TRACED = compiled_hooks.SUPPORTED
_compiling = compiled_hooks.is_compiling


def _eager(hook: Callable, traced: bool) -> Callable:
    """The hook as registered: as it is where it traces into graphs
    (``traced``), else kept out of Dynamo (torch.compiler.disable), which
    then runs it eagerly with a graph break."""
    if traced or _DISABLE_DYNAMO is None:
        return hook
    return _DISABLE_DYNAMO(hook)


class _Alias(torch.autograd.Function):
    """Identity on tensors whose backward hands the incoming gradients to
    ``report`` (a bound method of the module call, a tprobe._C.ModuleCall).

    Both run in C++ (client/python/binding/module_alias.h), without a
    Python frame: forward(ctx, report, *tensors) keeps ``report`` in the
    context, leaves missing gradients None (what set_materialize_grads
    (False) sets) and returns the tensors detached; backward(ctx, *grads)
    calls ``report(grads)``, swallowing what it raises (never break the
    backward pass), and passes the gradients on."""

    forward = staticmethod(AliasForward(_detach))
    backward = staticmethod(alias_backward)


# The autograd engine runs a Function's backward node through the node
# class's ``apply``, which torch writes in Python to look up the user's
# backward (or vjp) on every call; _Alias's node runs its backward directly.
_Alias._backward_cls.apply = _Alias.backward

# torch's C++ Function.apply. PyTorch 2.x wraps it in a Python classmethod
# that binds default arguments (only for setup_context Functions) and routes
# functorch transforms; _Alias needs neither, so outside functorch the
# wrapper's cost per call is skipped.
_APPLY_CPP = torch._C._FunctionBase.__dict__["apply"].__get__(None, _Alias)


def _alias(report: Callable, tensors: List[_Tensor]) -> tuple:
    """The aliases of ``tensors``, whose backward hands ``report`` their
    gradients (ModuleHookBase does this for a lone tensor in C++)."""
    if _FUNCTORCH_ACTIVE is not None and _FUNCTORCH_ACTIVE():
        result = _Alias.apply(report, *tensors)
    else:
        result = _APPLY_CPP(report, *tensors)
    return result if type(result) is tuple else (result,)


def _flat(items: Sequence[Any]) -> "Optional[tuple]":
    """(slots, tensors): the tensors among ``items`` that need a gradient
    and their slots, when no item is a container; None when one is (the
    walk then goes through grad_tensors and replace)."""
    slots: List[int] = []
    tensors: List[_Tensor] = []
    for i, item in enumerate(items):
        if isinstance(item, _Tensor):
            if item.requires_grad:
                slots.append(i)
                tensors.append(item)
        elif isinstance(item, CONTAINERS):
            return None
    return slots, tensors


def _wrap(report: Callable, item: Any) -> Any:
    """``item`` (a value the hooks' C++ does not walk: a tuple or list
    other than one tensor, a dict, and what they hold) with each tensor
    that needs a gradient replaced by its alias, which hands ``report`` the
    gradients, one per tensor; None when it holds no such tensor."""
    kind = type(item)
    flat = _flat(item) if kind is tuple or kind is list else None
    if flat is not None:  # the usual case: no container inside
        slots, tensors = flat
        if not tensors:
            return None
        items = list(item)
        for i, alias in zip(slots, _alias(report, tensors)):
            items[i] = alias
        if kind is list:
            item[:] = items
            return item
        return tuple(items)
    tensors = []
    grad_tensors(item, tensors, 0)
    if not tensors:
        return None
    return replace(item, iter(_alias(report, tensors)), 0)


set_module_hook_tools(_Tensor, _APPLY_CPP, _Alias.apply, _FUNCTORCH_ACTIVE,
                      torch.is_grad_enabled, _wrap)


class _ModuleHook(ModuleHookBase):
    """The forward pre-hook and hook of one module, holding what every call
    of it shares. Their eager path, and records(), begin(), take(), end()
    and abort(), are ModuleHookBase's, in C++ (client/python/binding/
    module_hook.h); a call is a tprobe._C.ModuleCall. Inside a graph that
    torch.compile builds, the hooks hand the call to tprobe.torch.
    compiled_hooks, which calls back begin(), take() and end() when the
    graph runs."""

    __slots__ = ("key", "__weakref__")

    def __init__(self, rt: Runtime, module: torch.nn.Module, base: str,
                 gate: Optional[Callable[[], bool]],
                 grad_hooks: GradHooks) -> None:
        super().__init__()
        self.rt = rt
        self.base = base
        self.gate = gate
        self.grad_hooks = grad_hooks
        self.params_hooked = False
        # Modules with inplace=True get no backward entry (read once: a
        # missing attribute costs nn.Module.__getattr__ an exception).
        self.inplace = bool(getattr(module, "inplace", False))
        # How a compiled graph names this hook and its module.
        self.key = compiled_hooks.register(self, module) \
            if compiled_hooks.SUPPORTED else None

    # PyTorch 1.13: hooks without kwargs.
    def pre(self, module: torch.nn.Module, args: tuple) -> Optional[tuple]:
        return self.eager_pre(module, args, None)

    def post(self, module: torch.nn.Module, args: tuple,
             output: Any) -> Any:
        return self.eager_post(module, args, None, output)

    def pre_kwargs(self, module: torch.nn.Module, args: tuple,
                   kwargs: Optional[dict]) -> Any:
        if _TRACED and _compiling():
            if self.rt.level != "L0":  # see _PRE_OUTSIDE_DYNAMO
                return _PRE_OUTSIDE_DYNAMO(self, module, args, kwargs)
            return compiled_hooks.pre(self, module, args, kwargs)
        return self.eager_pre(module, args, kwargs)

    def post_kwargs(self, module: torch.nn.Module, args: tuple,
                    kwargs: Optional[dict], output: Any) -> Any:
        if _TRACED and _compiling():
            if self.rt.level != "L0":
                return _POST_OUTSIDE_DYNAMO(self, module, args, kwargs, output)
            return compiled_hooks.post(self, output)
        return self.eager_post(module, args, kwargs, output)

    def wrapper(self, module: torch.nn.Module,
                compiled: Callable[[torch.nn.Module], None]
                ) -> ModuleWrapper:
        """The module call wrapper that runs these hooks' eager path around
        ``module``'s calls (tprobe._C.ModuleWrapper), for its
        _compiled_call_impl; ``compiled(module)`` when it runs under
        torch.compile."""
        return ModuleWrapper(module, module._call_impl, self.eager_pre,
                             self.eager_post, self.abort, compiled)


def _replica_wrapped(replicate: Callable) -> Callable:
    """torch's Module._replicate_for_data_parallel, for nn.DataParallel,
    with a wrapped module's replica (which gets a copy of its __dict__)
    wrapped for itself: the copied wrapper would call the module, not the
    replica."""
    def replicate_for_data_parallel(self: torch.nn.Module) -> Any:
        replica = replicate(self)
        wrapper = vars(replica).get(CALL_IMPL)
        if isinstance(wrapper, ModuleWrapper):
            vars(replica)[CALL_IMPL] = ModuleWrapper(
                replica, replica._call_impl, wrapper.pre, wrapper.post,
                wrapper.abort, wrapper.compiled)
        return replica

    return replicate_for_data_parallel


if _WRAPS:
    torch.nn.Module._replicate_for_data_parallel = _replica_wrapped(
        torch.nn.Module._replicate_for_data_parallel)


def _wrappable(module: torch.nn.Module) -> bool:
    """Whether a module call wrapper stands in for the hooks on ``module``
    (PyTorch >= 2.1): its calls then skip torch's hook loop. The wrapper
    runs around that loop, so it sees what the hooks would only where the
    loop has nothing else to run: no hook on the module, and no global
    module hook, when it is hooked (a hook that comes later runs inside
    the wrapper). Not where module.compile() set its own call."""
    return _WRAPS and getattr(module, CALL_IMPL) is None and \
        not (module._forward_pre_hooks or module._forward_hooks or
             module._backward_pre_hooks or module._backward_hooks or
             any(_GLOBAL_HOOKS))


# The hooks trace into compiled graphs at level L0 only. At mix (or L1, for
# a module of module_dump) the API wrappers break the graph around every
# call, so compile runs the model eagerly anyway (tprobe.torch.
# compile_notice says so), and graphs cut that fine would record torch's
# own calls (Tensor.stride at risk_level ALL) in their guards and ops:
# there the hooks are registered outside Dynamo (_eager), and hooks
# registered at L0 go outside it through these after a live change of
# level. Made when the first hook that Dynamo may trace is registered
# (_outside_dynamo): torch.compiler.disable imports torch._dynamo, about
# 0.9 s, which an eager model whose modules are all wrapped never needs.
_PRE_OUTSIDE_DYNAMO: Optional[Callable] = None
_POST_OUTSIDE_DYNAMO: Optional[Callable] = None


def _outside_dynamo() -> None:
    global _PRE_OUTSIDE_DYNAMO, _POST_OUTSIDE_DYNAMO
    if _PRE_OUTSIDE_DYNAMO is None:
        _PRE_OUTSIDE_DYNAMO = _DISABLE_DYNAMO(_ModuleHook.pre_kwargs)
        _POST_OUTSIDE_DYNAMO = _DISABLE_DYNAMO(_ModuleHook.post_kwargs)

_ORIG_MOD = "_orig_mod"


def _forget_compiled(models: List[Any]) -> None:
    """Drops what Dynamo compiled of these models' forwards before their
    hooks were in (a warm-up run before start()): Dynamo does not guard
    module hooks, so those graphs would run on without them, and every
    step would be dumped empty. The forwards compile again, with the
    hooks, at their next call."""
    dynamo = sys.modules.get("torch._dynamo")
    reset_code = getattr(dynamo, "reset_code", None)
    if reset_code is None:
        return  # nothing compiled yet
    codes = set()
    for model in models:
        if isinstance(model, torch.nn.Module):
            for module in model.modules():
                forward = getattr(type(module), "forward", None)
                code = getattr(forward, "__code__", None)
                if code is not None:
                    codes.add(code)
    for code in codes:
        reset_code(code)


class ModuleHooks:
    """Registers the hooks on every submodule of the models given to
    PrecisionDebugger.start(), once per model."""

    def __init__(self, rt: Runtime, grad_hooks: GradHooks) -> None:
        self.rt = rt
        self.grad_hooks = grad_hooks
        self._models: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        # Every module with tprobe's hooks, and those of them module_dump
        # hooked alone.
        self._hooked: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        self._alone: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        # module_dump(): whether its modules record now.
        self.module_dump_on = False
        # Each hook's RemovableHandle; out of the modules for the steps
        # that record nothing (tprobe.torch.hook_switch), unless a model is
        # compiled: Dynamo does not guard module hooks (skip_nnmodule_hook_
        # guards), so a graph keeps the hooks it was traced with, and its
        # hooks must be in whenever it is traced (compiled_hooks).
        self.switch = HookSwitch()
        # The modules whose calls go through a module call wrapper in place
        # of the hooks (_wrappable), out for those steps too.
        self.wrappers = WrapperSwitch(
            lambda module, hook: hook.wrapper(module, self._compiled))
        self.compiled = False
        # The modules torch.compile compiled alone (compiled_hooks.
        # compiled_alone): their own hooks run outside Dynamo.
        self._alone_compiled: "weakref.WeakSet[torch.nn.Module]" = \
            weakref.WeakSet()

    def remove(self) -> None:
        """Takes every module hook off; register() hooks a model again."""
        self.switch.remove()
        self.wrappers.remove()
        self._models = weakref.WeakSet()
        self._hooked = weakref.WeakSet()
        self._alone = weakref.WeakSet()

    def suspend(self) -> None:
        """Takes the hooks and wrappers out for steps that record nothing
        (the hooks stay in a compiled model: see ``switch``)."""
        if not self.compiled:
            self.switch.suspend()
        self.wrappers.suspend()

    def resume(self) -> None:
        """Puts back what suspend() took out."""
        self.switch.resume()
        self.wrappers.resume()

    def register(self, model: Any) -> None:
        many = isinstance(model, (list, tuple))
        was_compiled = self.compiled
        models = [self._unwrap(m) for m in (model if many else [model])]
        if not self.compiled:
            self.compiled = any(compiled_hooks.is_compiled(m) for m in models
                                if isinstance(m, torch.nn.Module))
        if self.compiled and not was_compiled:
            self._wrappers_to_hooks()
        if self.compiled:
            for m in models:
                if isinstance(m, torch.nn.Module):
                    self._alone_compiled.update(
                        compiled_hooks.compiled_alone(m))
        for where, module in new_submodules(models, many, self._models,
                                            torch.nn.Module, self._named):
            self._hook(module, where, None)
        if self.compiled:
            _forget_compiled(models)

    def register_one(self, module: torch.nn.Module, path: str) -> bool:
        """Hooks ``module`` alone (not its children) as ``Module.{path}.
        {Class}``, recording only while ``module_dump_on`` (msprobe's
        module_dump; a module it hooked before is hooked so already). False
        when the module has tprobe's hooks as part of a model."""
        if module in self._alone:
            return True
        if module in self._hooked:
            return False
        self._alone.add(module)
        self._hook(module, path, lambda: self.module_dump_on)
        # Level L1 records this module alone (if the level becomes L1).
        self.rt.session.dump_alone_at_l1(
            Session.module_base(path, type(module).__name__))
        return True

    def _unwrap(self, model: Any) -> Any:
        """The module that torch.compile wrapped (an OptimizedModule keeps
        it as ``_orig_mod``), or ``model`` itself."""
        while compiled_hooks.is_compile_wrapper(model):
            self.compiled = True
            model = model._modules[_ORIG_MOD]
        return model

    @staticmethod
    def _named(model: torch.nn.Module) -> Iterator[tuple]:
        """model.named_modules() as eager names them: a block that
        torch.compile wrapped in place (``blocks[0] = torch.compile(
        block)``) is named ``blocks.0``, not ``blocks.0._orig_mod``, and
        the wrapper gets no hooks (it would be one more entry)."""
        for path, module in model.named_modules():
            if compiled_hooks.is_compile_wrapper(module):
                continue
            if _ORIG_MOD in path:
                path = ".".join(p for p in path.split(".") if p != _ORIG_MOD)
            yield path, module

    def _hook(self, module: torch.nn.Module, path: str,
              gate: Optional[Callable[[], bool]]) -> None:
        self._hooked.add(module)
        hook = _ModuleHook(self.rt, module,
                           Session.module_base(path, type(module).__name__),
                           gate, self.grad_hooks)
        if not self.compiled and _wrappable(module):
            self.wrappers.add(module, hook)
        else:
            self._register_hooks(module, hook)

    def _wrappers_to_hooks(self) -> None:
        """A model turned out compiled: Dynamo traces hooks (compiled_hooks)
        but not a wrapper, so each wrapped module gets the hooks instead."""
        for module, hook in self.wrappers.items():
            self._register_hooks(module, hook)
        self.wrappers.remove()

    def _compiled(self, module: torch.nn.Module) -> None:
        """A wrapped module runs under torch.compile (a model compiled after
        start() hooked it): the hooks go in for good in every wrapper's
        place, where Dynamo traces them from its next compile on."""
        if not self.compiled:
            self.compiled = True
            self._wrappers_to_hooks()

    def _register_hooks(self, module: torch.nn.Module,
                        hook: _ModuleHook) -> None:
        # A module compiled alone runs its own hooks outside its graph
        # (torch calls them around the compiled forward, and compiled here
        # they would be two more graphs): those stay eager.
        traced = _TRACED and self.rt.level == "L0" and hook.gate is None \
            and module not in self._alone_compiled
        if traced:
            _outside_dynamo()
        pre = _eager(hook.pre_kwargs, traced)
        post = _eager(hook.post_kwargs, traced)
        # Not always_call in a compiled model: Dynamo guards the hook's id
        # in the always_call dict, and each of its blocks would compile
        # alone (a forward that raises leaves its call open until a later
        # call of the module or the step's end closes it).
        if _ALWAYS_CALL and not self.compiled:
            handles = (
                module.register_forward_pre_hook(pre, with_kwargs=True),
                module.register_forward_hook(post, with_kwargs=True,
                                             always_call=True))
        elif _WITH_KWARGS:
            handles = (
                module.register_forward_pre_hook(pre, with_kwargs=True),
                module.register_forward_hook(post, with_kwargs=True))
        else:
            handles = (
                module.register_forward_pre_hook(_eager(hook.pre, False)),
                module.register_forward_hook(_eager(hook.post, False)))
        self.switch.add(handles)
