"""What tprobe says when API-level capture (levels L1 and mix) meets
torch.compile: two lines on stderr, each at most once a run.

tprobe's API wrappers (tprobe._C.ApiWrapper, tprobe.torch.api_hooks) are C
objects that Dynamo cannot trace. Each hooked API that Dynamo meets as a
function (F.linear, torch.matmul, F.scaled_dot_product_attention, and so
the modules that call them) ends the graph there: a graph break. The call
runs eagerly and is dumped with eager's numerics, and Dynamo compiles what
follows as a new graph. What Dynamo traces itself, tensor methods and
operators (``x.chunk(3)``, ``x + y``, ``x @ w``), stays in its graphs and
is not dumped; but Inductor's extern kernels call torch.mm, torch.addmm and
torch.bmm as Inductor found them when it was imported: the wrappers, when
that came after they were installed, and then the compiled forward's and
backward's matmuls are dumped as ``Torch.mm.N.forward`` entries.

- start(): said when the model given to start() (or the constructor's) is
  compiled: a torch._dynamo OptimizedModule (``torch.compile(model)``), a
  module whose call is compiled (``Module.compile()``), or one with such a
  submodule. Each model is walked once (a weak set of the models seen), and
  not at all while torch._dynamo is not imported (nothing is compiled then).
- step(): said at the first step() in which Dynamo broke graphs at the API
  wrappers: how many (the breaks in torch._dynamo.utils.counters
  ["graph_break"] whose reason names ApiWrapper, counted over the step),
  how many in all, and how many graphs Dynamo compiled. It also covers what
  start() cannot see (a compiled function or forward), saying the whole.

On a torch without torch.compile (1.13) nothing is looked at. A failure
here is reported once (Runtime.warn_once) and never raised into training.
"""

import sys
import weakref
from typing import Any, Optional, Tuple

import torch

from tprobe._common.debugger import API_LEVELS
from tprobe._common.runtime import Runtime
from tprobe.torch import compiled_hooks

# Whether this torch has torch.compile (PyTorch 2.x).
_HAS_COMPILE = hasattr(torch, "compile")

_WHY = ("torch.compile cannot trace tprobe's API wrappers, so Dynamo breaks "
        "the graph at each hooked API call and runs that call eagerly, "
        "dumped with eager's numerics, not compile's; what the compiled "
        "graphs run (the tensor methods and operators Dynamo keeps there) is "
        "not dumped, but the matmuls Inductor calls through torch can be, as "
        "Torch.mm, Torch.addmm or Torch.bmm forward entries, the backward's "
        "too")


def _dynamo(name: str) -> Any:
    """torch._dynamo.{name} when torch._dynamo is imported, else None."""
    return sys.modules.get("torch._dynamo." + name)


def _counters() -> Any:
    """Dynamo's counters, or None while torch._dynamo is not imported."""
    return getattr(_dynamo("utils"), "counters", None)


def _counted() -> Tuple[int, int, int]:
    """(graph breaks at tprobe's API wrappers, graph breaks in all, graphs)
    Dynamo has counted so far."""
    counters = _counters()
    if counters is None:
        return 0, 0, 0
    ours = total = 0
    for reason, n in counters["graph_break"].items():
        total += n
        if "ApiWrapper" in reason:
            ours += n
    return ours, total, counters["stats"]["unique_graphs"]


class CompileNotice:
    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._seen: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        self._said_start = False
        # Done: the step line is said (or this torch cannot compile).
        self._done = not _HAS_COMPILE
        # _counted() at the last step boundary; None before the first
        # start() with API hooks.
        self._before: Optional[Tuple[int, int, int]] = None

    def start(self, model: Any, api_hooked: bool) -> None:
        """After start(): says so when `model` is compiled and API hooks
        are in (`api_hooked`) at level L1 or mix."""
        if self._done or not api_hooked or self.rt.level not in API_LEVELS:
            return
        try:
            if self._before is None:
                self._before = _counted()
            if self._said_start or _dynamo("eval_frame") is None:
                return
            models = model if isinstance(model, (list, tuple)) else [model]
            for root in models:
                if not isinstance(root, torch.nn.Module) or root in self._seen:
                    continue
                self._seen.add(root)
                if compiled_hooks.is_compiled(root):
                    self._said_start = True
                    self._say(f"level {self.rt.level} on a compiled model: "
                              f"{_WHY}; how many graph breaks that makes is "
                              "said after the first step that compiles")
                    return
        except Exception as error:  # noqa: BLE001
            self.rt.warn_once("the torch.compile notice", error)

    def step(self) -> None:
        """After step(): says how many graph breaks the API wrappers made
        in the step, the first time they made any."""
        if self._done or self._before is None:
            return
        try:
            now = _counted()
            ours, total, graphs = (a - b for a, b in zip(now, self._before))
            self._before = now
            if ours <= 0:
                return
            self._done = True
            line = (f"level {self.rt.level} under torch.compile: Dynamo broke "
                    f"the graph {ours} times at tprobe's API wrappers in the "
                    f"last step ({total} graph breaks in all, {graphs} "
                    "graphs compiled); those API calls ran eagerly")
            self._say(line if self._said_start else f"{line}: {_WHY}")
        except Exception as error:  # noqa: BLE001
            self.rt.warn_once("the torch.compile notice", error)

    def watched(self) -> Optional[Tuple[dict, ...]]:
        """What SteadySteps must watch so that step() says the line when
        due (debugger._steady_boundaries): () when step() says nothing any
        more (the line is said, or nothing is counted); Dynamo's counters
        and their graph breaks while none was counted (a break adds the
        first key, a reset of Dynamo a new dict: each changes a size);
        sys.modules while Dynamo is not imported (compiling imports it);
        None when a model start() was given is compiled, or breaks were
        counted already (each step() looks)."""
        if self._done or self._before is None:
            return ()
        if self._said_start:
            return None
        counters = _counters()
        if counters is None:
            return (sys.modules,)
        breaks = counters["graph_break"]
        return None if breaks else (counters, breaks)

    @staticmethod
    def _say(line: str) -> None:
        try:
            sys.stderr.write(f"[tprobe] {line} (said once)\n")
        except Exception:  # noqa: BLE001 - stderr may be closed
            pass
