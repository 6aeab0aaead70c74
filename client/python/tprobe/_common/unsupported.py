"""The msprobe names tprobe does not provide: each raises
NotImplementedError with a message that says what tprobe does instead
(docs/msprobe-api.md lists them)."""

from typing import Any, Callable


def unsupported(name: str, instead: str) -> Callable[..., Any]:
    """A callable standing for msprobe's `name`; calling it raises."""
    message = f"{name} is not supported by tprobe: {instead}"

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(message)

    refuse.__name__ = name.rsplit(".", 1)[-1]
    refuse.__qualname__ = refuse.__name__
    refuse.__doc__ = message
    return refuse
