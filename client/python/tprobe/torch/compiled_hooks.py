"""Module hooks inside the graphs that torch.compile builds (levels L0 and
mix), with no graph break: what a compiled model really runs is dumped,
under eager's names.

When Dynamo traces a module call it inlines the module's hooks; tprobe's
(tprobe.torch.module_hooks) see that they are being traced and take this
path instead of calling the binding, which Dynamo cannot trace. Four
custom ops (torch.library) stand for the binding's calls in the graph:

- ``tprobe::module_open(chain, tensors, key, site)`` where the call
  begins, with the tensors of its args and kwargs;
- ``tprobe::module_close(chain, tensors, key, site)`` where it ends, with
  those of its output;
- ``tprobe::backward_begin(call, grads)`` and ``tprobe::backward_end(call,
  grads)`` in the backward graph, from identity autograd Functions
  (_TapOutput, _TapArgs) around the output tensors and the argument
  tensors that need a gradient, as the eager hooks' _Alias nodes do.

Inductor must neither drop them (they return nothing anyone uses) nor
reorder them: the forward's two declare that they change one tensor
(_CHAIN), so each depends on the one before, and the backward's two are
effectful (torch.library._register_effectful_op, ORDERED: AOT autograd
threads a token through them). So the calls reach the client core in
eager's order (the backward through AOT autograd: compiled autograd is not
needed).

At run time each op's kernel is the eager hook's own code
(_ModuleHook.begin/take/end and _Call's backward reports) on the tensors
the compiled graph computed: the client core names and counts the calls
(``Module.{path}.{Class}.forward.{N}``), applies the filters, takes the
stack and the statistics as it does for eager calls (statistics_on:
framework or daemon alike), so the tree has eager's entries with
compile's values. Where nothing records (an undumped
step, after the last step) the kernels return at once.

``key`` names the module's hook (register()): a 0-d tensor, so an input of
the graph, not a constant, and the blocks of a model, each compiled alone,
share one graph as they do without tprobe.

What is not a tensor in the arguments or output (an int, None, a string, a
dict's keys) is known when Dynamo traces the call: the hook describes it as
a layout of constants, and ``_site`` (which Dynamo runs once, at trace
time, and keeps as a constant: torch._dynamo.assume_constant_result) files
it under a site number that the op carries; the kernel rebuilds the
arguments from the layout and the tensors.

The id of a call whose backward is awaited travels through the graph as a
0-d int64 tensor (module_open's and module_close's result), saved by the
taps for the backward, so that each backward op reaches its own call whatever
the order of the backward. Ids not reached by a backward are let go at
step().

Needs torch.library's effectful-op registration and
torch.compiler.is_compiling (torch 2.13 has both); elsewhere (SUPPORTED is False) the hooks keep out of Dynamo and
run eagerly.
"""

import sys
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import torch

from tprobe.torch.grad_walk import MAX_DEPTH, grad_tensors, replace

_library = torch.library
_compiler = getattr(torch, "compiler", None)
SUPPORTED = (hasattr(_library, "_register_effectful_op")
             and hasattr(_library, "EffectType")
             and hasattr(_compiler, "is_compiling"))
is_compiling = _compiler.is_compiling if SUPPORTED else None

# Hook key -> (the _ModuleHook, its module), both weakly.
_hooks: Dict[int, Tuple[weakref.ref, weakref.ref]] = {}
# Site -> (how the kernel rebuilds the value from its tensors, backward),
# filed at trace time; backward: 0 none, 1 awaited without argument
# gradients, 2 with. _site_ids: ("open" or "close", layout, backward) ->
# site.
_sites: List[Tuple[Callable[[List[torch.Tensor]], Any], int]] = []
_site_ids: Dict[Tuple[str, Any, int], int] = {}
# id(call) -> the _Call whose backward is awaited.
_calls: Dict[int, Any] = {}

# A tensor in a layout; one that needs a gradient (inside the compiled
# graph, which runs without autograd, none does: the kernel hands the
# client core a detached alias that says so, as the eager hook's would).
_TENSOR = ("t",)
_NEEDS_GRAD = ("g",)
# What the forward's ops declare they change, so that their order is data:
# Inductor keeps an effectful op's token order only partly (independent
# branches, two embeddings, were reordered), a chain of writes to one
# tensor fully. Not in the backward: a graph that saved it would find it
# changed by the next graph's forward (blocks compiled alone); there the
# ops are effectful.
_CHAIN = torch.zeros(1)
# What a layout keeps as it is (and Dynamo as a constant).
_CONSTANTS = (bool, int, float, complex, str, bytes, slice, torch.dtype,
              torch.device, torch.memory_format, torch.layout)


def register(hook: Any, module: torch.nn.Module) -> torch.Tensor:
    """Files a module's hook under a key that its ops carry: a 0-d tensor,
    which Dynamo makes an input of the graph (an int attribute would be a
    constant, and each module a graph of its own)."""
    key = len(_hooks) + 1
    _hooks[key] = (weakref.ref(hook), weakref.ref(module))
    return torch.tensor(key, dtype=torch.int64)


def is_compile_wrapper(module: Any) -> bool:
    """Whether ``module`` is torch.compile's OptimizedModule (which keeps
    the compiled module as ``_orig_mod``)."""
    return isinstance(module, torch.nn.Module) and \
        type(module).__name__ == "OptimizedModule" and \
        "_orig_mod" in module._modules


def is_compiled(module: torch.nn.Module) -> bool:
    """Whether torch.compile wrapped or compiled ``module`` or one of its
    submodules (an OptimizedModule, or Module.compile())."""
    return any(is_compile_wrapper(sub)
               or getattr(sub, "_compiled_call_impl", None) is not None
               for sub in module.modules())


def forget() -> None:
    """Lets go of the calls whose backward never came (at step())."""
    _calls.clear()


# --- at trace time -------------------------------------------------------

def _layout(item: Any, tensors: List[torch.Tensor], depth: int) -> Any:
    """``item`` as constants, each tensor appended to ``tensors`` and
    marked _TENSOR or _NEEDS_GRAD."""
    if isinstance(item, torch.Tensor):
        tensors.append(item)
        return _NEEDS_GRAD if item.requires_grad else _TENSOR
    if depth < MAX_DEPTH:
        if isinstance(item, list):
            return ("l", tuple([_layout(v, tensors, depth + 1)
                                for v in item]))
        if isinstance(item, tuple):
            return ("u", tuple([_layout(v, tensors, depth + 1)
                                for v in item]))
        if isinstance(item, dict):
            return ("d", tuple(item.keys()),
                    tuple([_layout(v, tensors, depth + 1)
                           for v in item.values()]))
    if item is None or isinstance(item, _CONSTANTS):
        return ("c", item)
    # Anything else (an object of the model's own) cannot be a constant of
    # the graph: its type is recorded, and the entry shows None.
    return ("o", type(item).__name__)


def _site(role: str, layout: Any, backward: int) -> int:
    filed = (role, layout, backward)
    try:
        site = _site_ids.get(filed)
    except TypeError:  # an unhashable constant (a slice): filed anew
        site = None
    else:
        if site is not None:
            return site
    site = len(_sites)
    _sites.append((_builder(role, layout), backward))
    try:
        _site_ids[filed] = site
    except TypeError:
        pass
    return site


# Dynamo calls _site at trace time and puts its result in the graph as a
# constant (what torch._dynamo.assume_constant_result marks; set here so
# that importing tprobe does not import Dynamo).
_site._dynamo_marked_constant = True  # type: ignore[attr-defined]


class _Tap(torch.autograd.Function):
    """Identity on tensors that saves the call's id for the backward, which
    each subclass writes (two classes, not one with a flag in ctx: Dynamo
    traces a Function's backward once for the class)."""

    @staticmethod
    def forward(ctx: Any, call: torch.Tensor,
                *tensors: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        ctx.save_for_backward(call)
        return tuple([t.detach() for t in tensors])


class _TapOutput(_Tap):
    """Around a module's output tensors: their gradients go to
    tprobe::backward_begin."""

    @staticmethod
    def backward(ctx: Any, *grads: Optional[torch.Tensor]) -> tuple:
        (call,) = ctx.saved_tensors
        torch.ops.tprobe.backward_begin(call, list(grads))
        return (None,) + grads


class _TapArgs(_Tap):
    """Around a module's argument tensors: their gradients go to
    tprobe::backward_end."""

    @staticmethod
    def backward(ctx: Any, *grads: Optional[torch.Tensor]) -> tuple:
        (call,) = ctx.saved_tensors
        torch.ops.tprobe.backward_end(call, list(grads))
        return (None,) + grads


def _tap(tap: Any, call: torch.Tensor, item: Any,
         found: List[torch.Tensor]) -> Any:
    """``item`` with ``found``, its tensors that need a gradient
    (grad_tensors), through ``tap``; None when there are none."""
    if not found:
        return None
    aliases = tap.apply(call, *found)
    if isinstance(item, torch.Tensor):
        return aliases[0]
    return replace(item, iter(aliases), 0)


def pre(hook: Any, module: torch.nn.Module, args: tuple,
        kwargs: Optional[dict]) -> Any:
    """The forward pre-hook, traced: opens the call, taps the arguments."""
    tensors: List[torch.Tensor] = []
    layout = _layout((args, kwargs if kwargs is not None else {}),
                     tensors, 0)
    backward = 0
    found: List[torch.Tensor] = []
    if not hook.inplace and torch.is_grad_enabled():
        grad_tensors(args, found, 0)
        backward = 2 if found else 1
    call = torch.ops.tprobe.module_open(
        _CHAIN, tensors, hook.key, _site("open", layout, backward))
    if backward != 2:
        return None
    new_args = _tap(_TapArgs, call, args, found)
    return new_args if kwargs is None else (new_args, kwargs)


def post(hook: Any, output: Any) -> Any:
    """The forward hook, traced: closes the call, taps the output."""
    tensors: List[torch.Tensor] = []
    layout = _layout(output, tensors, 0)
    call = torch.ops.tprobe.module_close(
        _CHAIN, tensors, hook.key, _site("close", layout, 0))
    if hook.inplace or not torch.is_grad_enabled():
        return None
    found: List[torch.Tensor] = []
    grad_tensors(output, found, 0)
    return _tap(_TapOutput, call, output, found)


# --- at run time ---------------------------------------------------------

def _rebuild(layout: Any, tensors: Iterator[torch.Tensor]) -> Any:
    """The value that _layout described, with the run's tensors."""
    tag = layout[0]
    if tag == "t":
        return next(tensors)
    if tag == "g":
        return next(tensors).detach().requires_grad_()
    if tag == "c":
        return layout[1]
    if tag == "o":
        return None
    if tag == "d":
        return dict(zip(layout[1],
                        [_rebuild(v, tensors) for v in layout[2]]))
    items = [_rebuild(v, tensors) for v in layout[1]]
    return items if tag == "l" else tuple(items)


def _builder(role: str, layout: Any) -> Callable[[List[torch.Tensor]], Any]:
    """How a site's kernel rebuilds its value: _rebuild, or a shortcut for
    the usual layouts (positional tensors, no kwargs; one output tensor)."""
    if layout[0] in ("t", "g"):
        return _one_grad if layout[0] == "g" else _one
    if role == "open":
        args, kwargs = layout[1]
        if args[0] == "u" and kwargs == ("d", (), ()) and \
                all(item[0] in ("t", "g") for item in args[1]):
            grads = tuple([item[0] == "g" for item in args[1]])
            if not any(grads):
                return _positional
            return lambda tensors: (tuple([
                t.detach().requires_grad_() if g else t
                for t, g in zip(tensors, grads)]), {})
    return lambda tensors: _rebuild(layout, iter(tensors))


def _one(tensors: List[torch.Tensor]) -> torch.Tensor:
    return tensors[0]


def _one_grad(tensors: List[torch.Tensor]) -> torch.Tensor:
    return tensors[0].detach().requires_grad_()


def _positional(tensors: List[torch.Tensor]) -> Tuple[tuple, dict]:
    return tuple(tensors), {}


def _filed(key: int, site: int) -> Tuple[Any, Any, Callable, int]:
    """(hook, module, builder, backward) of a hook's call at a site; None
    for a hook or a module that is gone."""
    build, backward = _sites[site]
    hook_ref, module_ref = _hooks[key]
    return hook_ref(), module_ref(), build, backward


def _open(tensors: List[torch.Tensor], key: torch.Tensor, site: int) -> int:
    hook, module, build, backward = _filed(int(key), site)
    if hook is None or module is None or not hook.records():
        return 0
    rt = hook.rt
    local = rt.local
    local.busy += 1
    try:
        args, kwargs = build(tensors)
        call = hook.begin(module, args, kwargs)
        if call is None or not call.handle.backward or not backward:
            return 0
        call.wants_backward = True
        call.waits_inputs = backward == 2
        _calls[id(call)] = call
        return id(call)
    except Exception as error:  # noqa: BLE001
        rt.warn_once("a compiled module forward pre-hook", error)
        return 0
    finally:
        local.busy -= 1


def _close(tensors: List[torch.Tensor], key: torch.Tensor,
           site: int) -> int:
    hook, module, build, _ = _filed(int(key), site)
    if hook is None or module is None:
        return 0
    rt = hook.rt
    local = rt.local
    if not local.modules or local.busy:
        return 0
    call = hook.take(module)
    if call is None:
        return 0
    local.busy += 1
    try:
        if hook.end(call, module, build(tensors)):
            return id(call)
        _calls.pop(id(call), None)
        return 0
    except Exception as error:  # noqa: BLE001
        rt.warn_once("a compiled module forward hook", error)
        return 0
    finally:
        local.busy -= 1


def _call_id(value: int) -> torch.Tensor:
    return torch.scalar_tensor(value, dtype=torch.int64)


# The ops' schemas and kernels. Defined through torch.library.Library, not
# custom_op: a custom_op's call goes through a Python autograd wrapper and
# its redispatch (about 10 us an op here); these kernels are called by the
# dispatcher directly (CompositeExplicitAutograd: the graph that calls them
# runs without autograd).
_SCHEMAS = {
    "module_open": "(Tensor(a!) chain, Tensor[] tensors, Tensor key, "
                   "int site) -> Tensor",
    "module_close": "(Tensor(a!) chain, Tensor[] tensors, Tensor key, "
                    "int site) -> Tensor",
    "backward_begin": "(Tensor call, Tensor?[] grads) -> ()",
    "backward_end": "(Tensor call, Tensor?[] grads) -> ()",
}


def _module_open(chain: torch.Tensor, tensors: List[torch.Tensor],
                 key: torch.Tensor, site: int) -> torch.Tensor:
    return _call_id(_open(tensors, key, site))


def _module_close(chain: torch.Tensor, tensors: List[torch.Tensor],
                  key: torch.Tensor, site: int) -> torch.Tensor:
    return _call_id(_close(tensors, key, site))


def _backward_begin(call: torch.Tensor,
                    grads: List[Optional[torch.Tensor]]) -> None:
    waiting = _calls.get(int(call))
    if waiting is None:
        return
    if not waiting.waits_inputs:
        del _calls[int(call)]
    elif waiting.rt.on:
        # Held until backward_end: Inductor reuses a buffer's memory once
        # the graph is done with it, whoever else holds it.
        grads = [None if g is None else g.clone() for g in grads]
    waiting.on_output_grads(grads)


def _backward_end(call: torch.Tensor,
                  grads: List[Optional[torch.Tensor]]) -> None:
    waiting = _calls.pop(int(call), None)
    if waiting is not None:
        waiting.on_input_grads(grads)


def _fake_id(chain: torch.Tensor, tensors: List[torch.Tensor],
             key: torch.Tensor, site: int) -> torch.Tensor:
    return torch.empty((), dtype=torch.int64)


def _fake_none(call: torch.Tensor,
               grads: List[Optional[torch.Tensor]]) -> None:
    return None


_KERNELS = {
    "module_open": (_module_open, _fake_id),
    "module_close": (_module_close, _fake_id),
    "backward_begin": (_backward_begin, _fake_none),
    "backward_end": (_backward_end, _fake_none),
}


def _define_ops() -> Any:
    """The four ops, effectful (see the module docstring); returns the
    library, which must stay alive."""
    library = _library.Library("tprobe", "DEF")
    for name, schema in _SCHEMAS.items():
        kernel, fake = _KERNELS[name]
        library.define(name + schema)
        library.impl(name, kernel, "CompositeExplicitAutograd")
        _library.register_fake("tprobe::" + name, fake, lib=library)
        if name.startswith("backward"):
            _library._register_effectful_op("tprobe::" + name,
                                            _library.EffectType.ORDERED)
    return library


if SUPPORTED:
    try:
        _LIBRARY = _define_ops()
    except Exception as error:  # noqa: BLE001 - this torch's library differs
        SUPPORTED = False
        sys.stderr.write(f"[tprobe] torch.compile: module hooks cannot "
                         f"enter compiled graphs ({error!r}); they run "
                         f"eagerly, with a graph break each\n")
