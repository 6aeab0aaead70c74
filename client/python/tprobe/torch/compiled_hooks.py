"""Module hooks inside the graphs that torch.compile builds (levels L0 and
mix), with no graph break: what a compiled model really runs is dumped,
under eager's names.

When Dynamo traces a module call it inlines the module's hooks; tprobe's
(tprobe.torch.module_hooks) see that they are being traced and take this
path instead of calling the binding, which Dynamo cannot trace. Four
custom ops (torch.library) stand for the binding's calls in the graph:

- ``tprobe::module_open(chain, tensors, stats, key, site)`` where the
  call begins, with the tensors of its args and kwargs;
- ``tprobe::module_close(chain, tensors, stats, key, site)`` where it
  ends, with those of its output;
- ``tprobe::backward_begin(chain, call, grads, stats, which)`` and
  ``tprobe::backward_end(chain, call, grads, stats, which)`` in the
  backward graph, from identity autograd Functions (_TapOutput, _TapArgs)
  around the output tensors and the argument tensors that need a
  gradient, as the eager hooks' _Alias nodes do.

Inductor must neither drop them (they return nothing anyone uses) nor
reorder them: each declares that it changes a tensor, the forward's two
_CHAIN and the backward's two _BACKWARD_CHAIN, so each depends on the one
before. So the calls reach the client core in eager's order (the backward
in the order AOT autograd traced it, which is the autograd engine's:
compiled autograd is not needed).

Inductor's generated code calls each op by its name,
``torch.ops.tprobe.X.default``; that name is a _Direct, which calls the
kernel as a function where the dispatcher would do nothing but call it
(about 5 us an op saved: a compiled step of compiled_transformer.py
calls 112), and goes through the dispatcher otherwise (tracing, a
dispatch mode). TPROBE_OPS_DISPATCHED=1 leaves the names to torch.

At run time each op's kernel is the eager hook's own code
(_ModuleHook.begin/take/end and ModuleCall's backward reports) on the tensors
the compiled graph computed: the client core names and counts the calls
(``Module.{path}.{Class}.forward.{N}``), applies the filters, takes the
statistics as it does for eager calls, so the tree has eager's entries
with compile's values. Where the framework computes the statistics
(statistics_on: framework, or auto for a device's tensors), the graphs
compute those of the calls' float device tensors and gradients themselves
(``stats``, on all four ops: reductions that Inductor fuses into its
kernels) and the binding's hook takes them instead of reducing each
tensor with eager ops (_graph_stats, stats.given); the daemon computes
them from the bytes otherwise. The stack
of a call is the one Dynamo traced (_traced_stack), not the generated
code's that runs the kernel. Where nothing records (an undumped
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

Needs torch.library.register_fake and torch.compiler.is_compiling (torch
2.13 has both); elsewhere (SUPPORTED is False) the hooks keep out of
Dynamo and run eagerly.
"""

import linecache
import os
import sys
import weakref
from typing import (Any, Callable, Dict, Iterator, List, Optional, Sequence,
                    Tuple)

import torch

try:
    from torch.utils._python_dispatch import TorchDispatchMode as _DispatchMode
except ImportError:  # an older torch: no _Direct (SUPPORTED is False there)
    _DispatchMode = object  # type: ignore[assignment,misc]

from tprobe import _C
from tprobe.torch import stats as framework_stats
from tprobe.torch.grad_walk import MAX_DEPTH, grad_tensors, replace

_library = torch.library
_compiler = getattr(torch, "compiler", None)
SUPPORTED = (hasattr(_library, "register_fake")
             and hasattr(_compiler, "is_compiling"))
is_compiling = _compiler.is_compiling if SUPPORTED else None

# Hook key -> (the _ModuleHook, its module), both weakly.
_hooks: Dict[int, Tuple[weakref.ref, weakref.ref]] = {}


class _Site:
    """What a kernel needs of the call site that Dynamo traced: how to
    rebuild the value from its tensors (build), which of them need a
    gradient (grads: the kernel hands over aliases that say so), which
    have statistics computed by the graph (stats, in the order of the
    op's stats), whether the backward is awaited (0 no, 1 without argument
    gradients, 2 with) and the call's stack (a _C.Stack, "open" only)."""

    __slots__ = ("build", "grads", "stats", "backward", "stack")

    def __init__(self, build: Callable[[List[torch.Tensor]], Any],
                 grads: Tuple[int, ...], stats: Tuple[int, ...],
                 backward: int, stack: Any) -> None:
        self.build = build
        self.grads = grads
        self.stats = stats
        self.backward = backward
        self.stack = stack


# The sites, filed at trace time. _site_ids: ("open" or "close", layout,
# backward, statistics' tensors, stack frames) -> site.
_sites: List[_Site] = []
_site_ids: Dict[Tuple[str, Any, int, Tuple[int, ...], Tuple[str, ...]],
                int] = {}
# id(call) -> the ModuleCall whose backward is awaited.
_calls: Dict[int, Any] = {}
# id(call) -> (the ModuleCall, the graph's statistics of its output gradients,
# which gradients they are), held from backward_begin to backward_end (the
# call is held too: its id names no other call meanwhile).
_held: Dict[int, Tuple[Any, torch.Tensor, List[int]]] = {}
# Where parameter gradients go in dump.json. In eager they come as the
# backward of the call that used the parameter first ends (it completes
# the gradient; torch runs AccumulateGrad first); a compiled graph's come
# after its whole backward. So that the tree has eager's order, that
# call's backward holds their places (Session.param_grad_due) for each
# module that owns the parameter (a tied weight's: each, in the order
# their hooks were added). _first_use: id(parameter) -> id(the ModuleCall);
# _due: id(the ModuleCall) -> (module bases, ids of the parameters it ends).
_first_use: Dict[int, int] = {}
_due: Dict[int, Tuple[List[str], List[int]]] = {}
# Whether the hooks record in this step (set by recording()). Read when
# Dynamo traces a hook, so guarded: a step that records nothing runs a
# graph traced without tprobe's ops, as fast as the model alone, and the
# two graphs are each compiled once, not at every change.
_recording = True

# A tensor in a layout; one that needs a gradient (inside the compiled
# graph, which runs without autograd, none does: the kernel hands the
# client core a detached alias that says so, as the eager hook's would).
_TENSOR = ("t",)
_NEEDS_GRAD = ("g",)
# What the ops declare they change, so that their order is data: Inductor
# keeps a chain of writes to one tensor in order. An effectful op's token
# order it does not keep (torch 2.13's reorder_for_peak_memory loses the
# dependency on an effectful op: the token and position embeddings'
# backward were swapped). The backward's chain is another tensor, which
# the backward graph reads as a global and no forward saves: a saved one
# would fail autograd's version check once a later graph changed it
# (blocks compiled alone).
_CHAIN = torch.zeros(1)
_BACKWARD_CHAIN = torch.zeros(1)
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
    return any(is_compile_wrapper(sub) or _compiled_in_place(sub)
               for sub in module.modules())


def _compiled_in_place(module: torch.nn.Module) -> bool:
    """Whether Module.compile() compiled ``module``: it set the module's
    _compiled_call_impl (which tprobe's module call wrapper sets too)."""
    call = getattr(module, "_compiled_call_impl", None)
    return call is not None and not isinstance(call, _C.ModuleWrapper)


def recording(on: bool) -> None:
    """Says whether the hooks record from now on: the compiled graphs with
    tprobe's ops run while they do, those without while they do not."""
    global _recording
    _recording = on


def compiled_alone(model: torch.nn.Module) -> List[torch.nn.Module]:
    """The submodules of ``model`` that torch.compile compiled alone: the
    module an OptimizedModule wraps (``blocks[i] = torch.compile(block)``)
    or one whose compile() was called. torch runs their hooks outside the
    graph of their forward, so theirs must not trace into graphs: each
    hook would be a graph of its own."""
    return [sub._modules["_orig_mod"] if is_compile_wrapper(sub) else sub
            for sub in model.modules()
            if is_compile_wrapper(sub) or _compiled_in_place(sub)]


def forget() -> None:
    """Lets go of the calls whose backward never came (at step())."""
    _calls.clear()
    _held.clear()
    _first_use.clear()
    _due.clear()


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


def _traced_stack() -> Tuple[Tuple[str, int, str, Optional[str]], ...]:
    """The frames of stack.json's lines for the call being traced (path,
    line, function, source text), innermost first, as eager's would be:
    the frames of the code Dynamo traces (its record of them), then the
    real frames that called the compiled code, less Dynamo's own. Taken
    once, when Dynamo traces the call: a graph called later from elsewhere
    shows its first caller's frames."""
    try:
        from torch._guards import TracingContext
        traced = TracingContext.extract_stack()
    except Exception:  # noqa: BLE001 - a torch without that record
        return ()
    frames = [(f.filename, f.lineno, f.name, f.line) for f in reversed(traced)]
    outer: List[Any] = []
    frame = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if path.endswith(_COMPILE_ENTRY):
            outer = []  # what called the compiled code starts after it
        elif _DYNAMO_DIR not in path:
            outer.append(frame)
        frame = frame.f_back
    frames += [(f.f_code.co_filename, f.f_lineno, f.f_code.co_name,
                linecache.getline(f.f_code.co_filename, f.f_lineno))
               for f in outer]
    return tuple(frames)


# Where Dynamo begins to compile a frame, and Dynamo's files.
_COMPILE_ENTRY = "convert_frame.py"
_DYNAMO_DIR = "/torch/_dynamo/"


def _site(role: str, layout: Any, backward: int,
          stats: Tuple[int, ...]) -> int:
    frames = _traced_stack() if role == "open" else ()
    filed = (role, layout, backward, stats, frames)
    try:
        site = _site_ids.get(filed)
    except TypeError:  # an unhashable constant (a slice): filed anew
        site = None
    else:
        if site is not None:
            return site
    site = len(_sites)
    stack = _C.Stack(frames)
    _sites.append(_Site(_builder(role, layout), _grads(layout), stats,
                        backward, stack if stack else None))
    try:
        _site_ids[filed] = site
    except TypeError:
        pass
    return site


# Dynamo calls _site at trace time and puts its result in the graph as a
# constant (what torch._dynamo.assume_constant_result marks; set here so
# that importing tprobe does not import Dynamo).
_site._dynamo_marked_constant = True  # type: ignore[attr-defined]


# Whether host tensors' statistics are computed in the graph too. Not by
# default: on the CPU, Inductor's reductions of small tensors cost more
# than the eager ones (compiled_transformer.py under statistics_on
# framework: about 10.2 ms a step against 9.5, the reductions alone
# 0.6 ms); on a device they replace three kernel launches a tensor.
_ON_HOST = os.environ.get("TPROBE_GRAPH_STATS_ON_HOST") == "1"


def _hook_reduces(is_cpu: bool) -> bool:
    """Whether the graph computes the statistics of a tensor on the host
    (is_cpu) or on a device: where the framework computes them
    (statistics_on) to summary_mode statistics, on a device (on the host
    too with TPROBE_GRAPH_STATS_ON_HOST=1)."""
    return (_ON_HOST or not is_cpu) and \
        _C.producer_summary(is_cpu) == "statistics"


# Run by Dynamo at trace time, its result kept as a constant (as _site): a
# graph keeps the choice it was traced with when a live config changes
# statistics_on (the binding then reduces the tensors itself, or ignores
# the graph's statistics).
_hook_reduces._dynamo_marked_constant = True  # type: ignore[attr-defined]

# The dtypes whose statistics the graph computes: those stats.py reduces
# with 3 ops into 4 values of the tensor's dtype.
_GRAPH_STATS_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _graph_stats(tensors: List[Optional[torch.Tensor]]
                 ) -> Tuple[List[torch.Tensor], Tuple[int, ...]]:
    """Traced: the statistics (Max, Min, Mean, Norm, stacked) of the
    tensors whose statistics the framework computes, by reductions that
    Inductor fuses into the graph's kernels; and which tensors they are.
    The others are reduced by the binding's hook, as eager ones are."""
    stats: List[torch.Tensor] = []
    which: List[int] = []
    for i, t in enumerate(tensors):
        if t is not None and t.dtype in _GRAPH_STATS_DTYPES and \
                t.dim() > 0 and \
                t.numel() > 0 and _hook_reduces(t.device.type == "cpu"):
            values = t.detach()
            low, high = torch.aminmax(values)
            stats.append(torch.stack([high, low, values.mean(),
                                      torch.linalg.vector_norm(values)]))
            which.append(i)
    return stats, tuple(which)


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
        stats, which = _graph_stats(list(grads))
        _OPS["backward_begin"](_BACKWARD_CHAIN, call, list(grads), stats,
                               list(which))
        return (None,) + grads


class _TapArgs(_Tap):
    """Around a module's argument tensors: their gradients go to
    tprobe::backward_end."""

    @staticmethod
    def backward(ctx: Any, *grads: Optional[torch.Tensor]) -> tuple:
        (call,) = ctx.saved_tensors
        stats, which = _graph_stats(list(grads))
        _OPS["backward_end"](_BACKWARD_CHAIN, call, list(grads), stats,
                             list(which))
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
    if not _recording:
        return None
    tensors: List[torch.Tensor] = []
    layout = _layout((args, kwargs if kwargs is not None else {}),
                     tensors, 0)
    backward = 0
    found: List[torch.Tensor] = []
    if not hook.inplace and torch.is_grad_enabled():
        grad_tensors(args, found, 0)
        backward = 2 if found else 1
    stats, which = _graph_stats(tensors)
    call = _OPS["module_open"](
        _CHAIN, tensors, stats, hook.key,
        _site("open", layout, backward, which))
    if backward != 2:
        return None
    new_args = _tap(_TapArgs, call, args, found)
    return new_args if kwargs is None else (new_args, kwargs)


def post(hook: Any, output: Any) -> Any:
    """The forward hook, traced: closes the call, taps the output."""
    if not _recording:
        return None
    tensors: List[torch.Tensor] = []
    layout = _layout(output, tensors, 0)
    stats, which = _graph_stats(tensors)
    call = _OPS["module_close"](
        _CHAIN, tensors, stats, hook.key, _site("close", layout, 0, which))
    if hook.inplace or not torch.is_grad_enabled():
        return None
    found: List[torch.Tensor] = []
    grad_tensors(output, found, 0)
    return _tap(_TapOutput, call, output, found)


# --- at run time ---------------------------------------------------------

def _grads(layout: Any) -> Tuple[int, ...]:
    """The indexes, among a layout's tensors, of those that need a
    gradient."""
    tags: List[str] = []

    def walk(item: Any) -> None:
        tag = item[0]
        if tag in ("t", "g"):
            tags.append(tag)
        elif tag in ("l", "u"):
            for v in item[1]:
                walk(v)
        elif tag == "d":
            for v in item[2]:
                walk(v)

    walk(layout)
    return tuple([i for i, tag in enumerate(tags) if tag == "g"])


def _rebuild(layout: Any, tensors: Iterator[torch.Tensor]) -> Any:
    """The value that _layout described, with the run's tensors."""
    tag = layout[0]
    if tag in ("t", "g"):
        return next(tensors)
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
        return _one
    if role == "open":
        args, kwargs = layout[1]
        if args[0] == "u" and kwargs == ("d", (), ()) and \
                all(item[0] in ("t", "g") for item in args[1]):
            return _positional
    return lambda tensors: _rebuild(layout, iter(tensors))


def _one(tensors: List[torch.Tensor]) -> torch.Tensor:
    return tensors[0]


def _positional(tensors: List[torch.Tensor]) -> Tuple[tuple, dict]:
    return tuple(tensors), {}


def _filed(key: int) -> Tuple[Any, Any]:
    """The hook and the module of a key; None for one that is gone."""
    hook_ref, module_ref = _hooks[key]
    return hook_ref(), module_ref()


def _prepared(site: _Site, tensors: List[torch.Tensor],
              stats: List[torch.Tensor]) -> List[torch.Tensor]:
    """The call's tensors as the binding gets them: an alias that needs a
    gradient for each that did (inside the compiled graph, which runs
    without autograd, none does), and the graph's statistics given to
    stats.reduce for theirs, copied (Inductor reuses a buffer once the
    graph is done with it, whoever else holds it)."""
    if site.grads:
        tensors = list(tensors)
        for i in site.grads:
            tensors[i] = tensors[i].detach().requires_grad_()
    if stats:
        _give(tensors, torch.stack(stats), site.stats)
    return tensors


def _give(tensors: List[Optional[torch.Tensor]], values: torch.Tensor,
          which: Sequence[int]) -> None:
    """Gives stats.reduce the graph's statistics (values' rows, a copy) of
    the tensors at ``which``, for the binding call that follows."""
    given = framework_stats.given
    for row, i in enumerate(which):
        given[id(tensors[i])] = values[row]


def _open(tensors: List[torch.Tensor], stats: List[torch.Tensor],
          key: torch.Tensor, site_number: int) -> int:
    hook, module = _filed(int(key))
    if hook is None or module is None or not hook.records():
        return 0
    site = _sites[site_number]
    rt = hook.rt
    local = rt.local
    local.busy += 1
    try:
        args, kwargs = site.build(_prepared(site, tensors, stats))
        call = hook.begin(module, args, kwargs, site.stack)
        if call is None or not call.handle.backward or not site.backward:
            return 0
        call.wants_backward = True
        call.waits_inputs = site.backward == 2
        _calls[id(call)] = call
        return id(call)
    except Exception as error:  # noqa: BLE001
        rt.warn_once("a compiled module forward pre-hook", error)
        return 0
    finally:
        framework_stats.given.clear()
        local.busy -= 1


def _close(tensors: List[torch.Tensor], stats: List[torch.Tensor],
           key: torch.Tensor, site_number: int) -> int:
    hook, module = _filed(int(key))
    if hook is None or module is None:
        return 0
    rt = hook.rt
    local = rt.local
    if not local.modules or local.busy:
        return 0
    call = hook.take(module)
    if call is None:
        return 0
    site = _sites[site_number]
    local.busy += 1
    try:
        if hook.end(call, module, site.build(_prepared(site, tensors,
                                                       stats))):
            _note_parameters(call, module)
            return id(call)
        _calls.pop(id(call), None)
        return 0
    except Exception as error:  # noqa: BLE001
        rt.warn_once("a compiled module forward hook", error)
        return 0
    finally:
        framework_stats.given.clear()
        local.busy -= 1


def _note_parameters(call: Any, module: torch.nn.Module) -> None:
    """Files the module's parameters that need a gradient under the call
    that used each first (_first_use)."""
    for param in module._parameters.values():
        if param is None or not param.requires_grad:
            continue
        first = _first_use.setdefault(id(param), id(call))
        bases, params = _due.setdefault(first, ([], []))
        if first == id(call):
            params.append(id(param))
        if call.base not in bases:
            bases.append(call.base)


def _hold_places(call: Any) -> None:
    """Holds the places of the parameter gradients that the backward of
    ``call`` completes (_first_use)."""
    due = _due.pop(id(call), None)
    if due is None or not call.rt.on:
        return
    bases, params = due
    for param in params:
        _first_use.pop(param, None)
    session = call.rt.session
    for base in bases:
        session.param_grad_due(base)


def _call_id(value: int) -> torch.Tensor:
    return torch.scalar_tensor(value, dtype=torch.int64)


# The ops' schemas and kernels. Defined through torch.library.Library, not
# custom_op: a custom_op's call goes through a Python autograd wrapper and
# its redispatch (about 10 us an op here); these kernels are called by the
# dispatcher directly (CompositeExplicitAutograd: the graph that calls them
# runs without autograd).
_SCHEMAS = {
    "module_open": "(Tensor(a!) chain, Tensor[] tensors, Tensor[] stats, "
                   "Tensor key, int site) -> Tensor",
    "module_close": "(Tensor(a!) chain, Tensor[] tensors, Tensor[] stats, "
                    "Tensor key, int site) -> Tensor",
    "backward_begin": "(Tensor(a!) chain, Tensor call, Tensor?[] grads, "
                      "Tensor[] stats, int[] which) -> ()",
    "backward_end": "(Tensor(a!) chain, Tensor call, Tensor?[] grads, "
                    "Tensor[] stats, int[] which) -> ()",
}


def _module_open(chain: torch.Tensor, tensors: List[torch.Tensor],
                 stats: List[torch.Tensor], key: torch.Tensor,
                 site: int) -> torch.Tensor:
    return _call_id(_open(tensors, stats, key, site))


def _module_close(chain: torch.Tensor, tensors: List[torch.Tensor],
                  stats: List[torch.Tensor], key: torch.Tensor,
                  site: int) -> torch.Tensor:
    return _call_id(_close(tensors, stats, key, site))


def _backward_begin(chain: torch.Tensor, call: torch.Tensor,
                    grads: List[Optional[torch.Tensor]],
                    stats: List[torch.Tensor], which: List[int]) -> None:
    waiting = _calls.get(int(call))
    if waiting is None:
        return
    # A copy of the graph's statistics (as _prepared's).
    values = torch.stack(stats) if stats else None
    if not waiting.waits_inputs:  # the entry is written now
        del _calls[int(call)]
        if values is not None:
            _give(grads, values, which)
        try:
            waiting.on_output_grads(grads)
        finally:
            framework_stats.given.clear()
        # Then eager computes the parameters' gradients.
        _hold_places(waiting)
        return
    if waiting.rt.on:
        # Held until backward_end: Inductor reuses a buffer's memory once
        # the graph is done with it, whoever else holds it.
        grads = [None if g is None else g.clone() for g in grads]
        if values is not None:
            _held[id(waiting)] = (waiting, values, which)
    waiting.on_output_grads(grads)


def _backward_end(chain: torch.Tensor, call: torch.Tensor,
                  grads: List[Optional[torch.Tensor]],
                  stats: List[torch.Tensor], which: List[int]) -> None:
    waiting = _calls.pop(int(call), None)
    if waiting is None:
        return
    held = _held.pop(id(waiting), None)
    if held is not None and waiting.grad_outputs:
        _give(waiting.grad_outputs, held[1], held[2])
    if stats:
        _give(grads, torch.stack(stats), which)
    # Eager has the parameters' gradients before the arguments'.
    _hold_places(waiting)
    try:
        waiting.on_input_grads(grads)
    finally:
        framework_stats.given.clear()


def _fake_id(*_: Any) -> torch.Tensor:
    return torch.empty((), dtype=torch.int64)


def _fake_none(chain: torch.Tensor, call: torch.Tensor,
               grads: List[Optional[torch.Tensor]],
               stats: List[torch.Tensor], which: List[int]) -> None:
    return None


_KERNELS = {
    "module_open": (_module_open, _fake_id),
    "module_close": (_module_close, _fake_id),
    "backward_begin": (_backward_begin, _fake_none),
    "backward_end": (_backward_end, _fake_none),
}


class _Direct:
    """What Inductor's generated code gets for ``torch.ops.tprobe.X.default``
    (it looks the name up at each call): the op's kernel, called directly
    where nothing but the kernel would run anyway (plain tensors, no
    dispatch mode: the compiled graph at run time), and the op through the
    dispatcher otherwise. The dispatcher's round trip (boxing the
    arguments, calling back into Python) costs several times the kernel's
    own work per call. Whatever else reads an attribute gets the
    OpOverload's."""

    __slots__ = ("overload", "kernel")

    def __init__(self, overload: Any, kernel: Callable) -> None:
        self.overload = overload
        self.kernel = kernel

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or _dispatch_modes() or type(args[0]) is not torch.Tensor:
            return self.overload(*args, **kwargs)
        return self.kernel(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.overload, name)


_dispatch_modes = getattr(torch._C, "_len_torch_dispatch_stack", None)
# The ops' OpOverloads, which the traced hooks call (their names in
# torch.ops.tprobe are _Direct's).
_OPS: Dict[str, Any] = {}


class _Resolve(_DispatchMode):
    """Runs nothing: calling an op under it makes torch's dispatcher find
    (and keep) the op's OpOverload, before _Direct takes its name."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Else torch wraps __torch_dispatch__ in torch._disable_dynamo,
        # whose first call imports torch._dynamo (about 0.9 s); this mode
        # runs once, when this module is imported, never under compile.
        return False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        return _fake_id() if func is _OPS["module_open"] or \
            func is _OPS["module_close"] else None


def _define_ops() -> Any:
    """The four ops (see the module docstring); returns the library, which
    must stay alive."""
    library = _library.Library("tprobe", "DEF")
    for name, schema in _SCHEMAS.items():
        kernel, fake = _KERNELS[name]
        library.define(name + schema)
        library.impl(name, kernel, "CompositeExplicitAutograd")
        _library.register_fake("tprobe::" + name, fake, lib=library)
        _OPS[name] = getattr(torch.ops.tprobe, name).default
    # The dispatcher keeps the OpOverload it finds for an op under a
    # dispatch mode (it looks it up by this name once): found before
    # _Direct takes the name.
    if _dispatch_modes is not None and \
            os.environ.get("TPROBE_OPS_DISPATCHED") != "1":
        chain, key = torch.zeros(1), torch.zeros((), dtype=torch.int64)
        samples = {"module_open": (chain, [], [], key, 0),
                   "module_close": (chain, [], [], key, 0),
                   "backward_begin": (chain, key, [], [], []),
                   "backward_end": (chain, key, [], [], [])}
        for name, (kernel, _) in _KERNELS.items():
            packet = getattr(torch.ops.tprobe, name)
            with _Resolve():
                packet.default(*samples[name])
            setattr(packet, "default", _Direct(_OPS[name], kernel))
    return library


if SUPPORTED:
    try:
        _LIBRARY = _define_ops()
    except Exception as error:  # noqa: BLE001 - this torch's library differs
        SUPPORTED = False
        sys.stderr.write(f"[tprobe] torch.compile: module hooks cannot "
                         f"enter compiled graphs ({error!r}); they run "
                         f"eagerly, with a graph break each\n")
