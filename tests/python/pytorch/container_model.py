"""A model whose modules return containers, as HuggingFace and other
third-party models do, for container_parity_test.py: run under msprobe or
tprobe with one config.json, it writes one dump tree.

- ``Encoder`` returns a dict, with a bool mask among its values, and takes
  that mask as an argument beside a tensor that needs a gradient;
- ``Block`` returns a ModelOutput: a dataclass that is also an OrderedDict
  holding only the fields that are set, written here as transformers writes
  it (transformers itself is not installed in the test environment);
- ``Head`` returns a plain dataclass with an unset field.
"""

import collections
import dataclasses
import os
import sys
from typing import Any, Optional

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import model_run  # noqa: E402


@dataclasses.dataclass
class ModelOutput(collections.OrderedDict):
    """transformers.utils.ModelOutput's behaviour that the dump sees: the
    set fields are the dict's items, in declaration order; setting an item
    sets the attribute too."""
    last_hidden_state: Optional[torch.Tensor] = None
    hidden_states: Optional[torch.Tensor] = None
    attentions: Optional[torch.Tensor] = None

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if value is not None:
                self[field.name] = value

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, value)
        super().__setattr__(key, value)


@dataclasses.dataclass
class HeadOutput:
    logits: Optional[torch.Tensor] = None
    loss: Optional[torch.Tensor] = None
    cache: Optional[int] = None


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict:
        h = self.proj(x)
        return {"scaled": h * 2, "mask": mask, "shifted": h + 1}


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.mix = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> ModelOutput:
        d = self.encoder(x, mask)
        hidden = self.mix(d["scaled"] + d["shifted"])
        return ModelOutput(last_hidden_state=hidden, hidden_states=hidden * 3)


class Head(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.out = torch.nn.Linear(4, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> HeadOutput:
        o = self.block(x, mask)
        return HeadOutput(logits=self.out(o.last_hidden_state +
                                          o["hidden_states"]), cache=3)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = Head()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head(x, mask).logits


def main() -> int:
    args = model_run.parse_args(__doc__)
    torch.manual_seed(0)
    model = Model()
    debugger, finish = model_run.debugger(args)
    for _ in range(args.steps):
        model.zero_grad()
        debugger.start(model)
        x = torch.randn(2, 4, requires_grad=True)
        mask = torch.ones(2, 4, dtype=torch.bool)
        model(x, mask).sum().backward()
        debugger.stop()
        debugger.step()
    finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
