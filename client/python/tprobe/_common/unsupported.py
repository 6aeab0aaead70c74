"""The msprobe names tprobe does not provide: each raises
NotImplementedError with a message that says what tprobe does instead
(docs/msprobe-api.md lists them)."""

from typing import Any, Callable, Dict


def unsupported(name: str, instead: str) -> Callable[..., Any]:
    """A callable standing for msprobe's `name`; calling it raises."""
    message = f"{name} is not supported by tprobe: {instead}"

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(message)

    refuse.__name__ = name.rsplit(".", 1)[-1]
    refuse.__qualname__ = refuse.__name__
    refuse.__doc__ = message
    return refuse


def refuse_token_arguments(arguments: Dict[str, Any]) -> None:
    """PrecisionDebugger.start's inference arguments (token_range, rank_id,
    scheduled_tokens): any that is given raises."""
    for name, value in arguments.items():
        if value is not None:
            raise NotImplementedError(
                f"PrecisionDebugger.start: {name} is not supported by "
                "tprobe (msprobe dumps only the given tokens of an "
                "inference run); call start(model) without it: every "
                "call of the step is dumped")
