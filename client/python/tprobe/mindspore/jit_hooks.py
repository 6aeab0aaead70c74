"""Functions compiled with mindspore.jit (levels L1 and mix): each call is
one entry ``Jit.{function}.{N}.forward`` (``Jit.{Cell class}`` for a
Cell's construct) with its arguments and outputs, as msprobe's jit dump
writes them. The API wrappers are taken off while the function runs, so
the compiler sees MindSpore's own functions; the calls inside the compiled
graph are not seen one by one. No backward entry is written for it.
"""

import functools
from typing import Any, Callable

from mindspore import nn

from tprobe._C import ApiWrapper
from tprobe._common.runtime import Runtime
from tprobe.mindspore.api_hooks import ApiHooks


def _executor_class() -> Any:
    from mindspore.graph import api
    return api._JitExecutor


class JitHooks:
    def __init__(self, rt: Runtime, apis: ApiHooks) -> None:
        self.rt = rt
        self.apis = apis
        self._original: Any = None

    def install(self) -> None:
        cls = _executor_class()
        self._original = cls.__call__
        cls.__call__ = self._wrap(self._original)

    def restore(self) -> None:
        if self._original is not None:
            _executor_class().__call__ = self._original
            self._original = None

    def _wrap(self, original: Callable) -> Callable:
        rt = self.rt
        apis = self.apis

        def __call__(executor: Any, *args: Any, **kwargs: Any) -> Any:
            if rt.local.busy:
                return original(executor, *args, **kwargs)
            apis.suspend()
            try:
                if not rt.on:
                    return original(executor, *args, **kwargs)
                return self._record(original, executor, args, kwargs)
            finally:
                apis.resume()

        return __call__

    def _record(self, original: Callable, executor: Any, args: tuple,
                kwargs: dict) -> Any:
        name = getattr(executor.fn, "__name__", "JitFunction")
        if name == "construct" and args and isinstance(args[0], nn.Cell):
            name = type(args[0]).__name__
        # One recorder per call (the name is the call's), the API hooks'.
        recorder = ApiWrapper(self.rt, f"Jit.{name}",
                              functools.partial(original, executor), False,
                              None, None)
        return recorder(*args, **kwargs)
