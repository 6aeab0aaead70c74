"""What an API wrapper shows of the function it stands for."""

from typing import Callable


def stand_in(wrapper: Callable, original: Callable, base: str) -> Callable:
    """Gives `wrapper` the name, qualified name and doc of `original` (the
    API name `base` when it has none) and records `original` as
    __wrapped__; returns `wrapper`."""
    wrapper.__name__ = getattr(original, "__name__", base)
    wrapper.__qualname__ = getattr(original, "__qualname__", wrapper.__name__)
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__wrapped__ = original
    return wrapper
