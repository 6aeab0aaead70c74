"""A model whose modules take and return tensors nested in containers, for
nested_parity_test.py: run under msprobe or tprobe with one config.json,
it writes one dump tree. The test imports it too, for torch's own
gradients of the same model and batch.

- ``lstm`` (nn.LSTM) returns ``(out, (h_n, c_n))``; no gradient reaches
  c_n;
- ``gru`` (nn.GRU) returns ``(out, h_n)``;
- ``pair`` (Pair) takes ``(x, [y])`` as one argument and returns
  ``{"a": (t1, [t2, mask, t3]), "n": Halves(t4, Box(t5))}``: a bool mask
  among the tensors, t3 gets no gradient, Halves is a namedtuple and Box
  a plain dataclass (which msprobe does not enter);
- ``collect`` (Collect) appends to the list it is given, which its caller
  reads after the call;
- ``layers`` hold a mixture-of-experts block each (MoE: top-2 routing,
  ``index_add_``), whose router logits the layer returns in a tuple inside
  its output; the model returns them all, nested, and the training step
  computes an auxiliary loss on them outside every module (``.to()`` as
  HuggingFace's load-balancing loss does).
"""

import collections
import dataclasses
import os
import sys
from typing import Tuple

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import model_run  # noqa: E402

WIDTH = 4
EXPERTS = 3


Halves = collections.namedtuple("Halves", "low high")


@dataclasses.dataclass
class Box:
    value: torch.Tensor


class Pair(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(WIDTH, WIDTH)

    def forward(self, pair: tuple) -> dict:
        x, (y,) = pair
        h = self.proj(x + y)
        mask = h > 0
        return {"a": (h * 2, [h + 1, mask, h - 1]),
                "n": Halves(h * 0.5, Box(h * 4))}


class Collect(torch.nn.Module):
    def forward(self, seen: list) -> None:
        seen.append(seen[0] * 3)


class Expert(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(WIDTH, 2 * WIDTH)
        self.down = torch.nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


class MoE(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(WIDTH, EXPERTS, bias=False)
        self.experts = torch.nn.ModuleList(Expert() for _ in range(EXPERTS))

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        logits = self.gate(x)
        weights, chosen = torch.topk(torch.softmax(logits, dim=-1), 2, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows, slot = torch.where(chosen == e)
            if rows.numel():
                out.index_add_(0, rows,
                               expert(x[rows]) * weights[rows, slot, None])
        return out, logits


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.moe = MoE()

    def forward(self, x: torch.Tensor) -> tuple:
        h, logits = self.moe(x)
        return x + h, (logits,)


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = torch.nn.LSTM(WIDTH, WIDTH, batch_first=True)
        self.gru = torch.nn.GRU(WIDTH, WIDTH, batch_first=True)
        self.pair = Pair()
        self.collect = Collect()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(2))
        self.head = torch.nn.Linear(WIDTH, 2)

    def forward(self, x: torch.Tensor) -> tuple:
        seq, (h_n, _) = self.lstm(x)
        g, g_n = self.gru(seq)
        d = self.pair((g, [seq]))
        a, n = d["a"], d["n"]
        seen = [a[0]]
        self.collect(seen)
        flat = (seen[-1] + a[1][0] + n.low + n.high.value).reshape(-1, WIDTH)
        router = ()
        for layer in self.layers:
            flat, logits = layer(flat)
            router += logits
        return self.head(flat) + h_n.mean() + g_n.mean(), router


def load_balancing_loss(router: tuple, device: torch.device) -> torch.Tensor:
    """HuggingFace's auxiliary loss, reduced: it moves each layer's router
    logits to one device first."""
    logits = torch.cat([layer.to(device) for layer in router], dim=0)
    share = torch.softmax(logits, dim=-1).mean(dim=0)
    return (share * share).sum() * EXPERTS


def build() -> Model:
    torch.manual_seed(0)
    return Model()


def batch(step: int) -> torch.Tensor:
    return torch.randn(2, 3, WIDTH,
                       generator=torch.Generator().manual_seed(step))


def loss(model: Model, x: torch.Tensor) -> torch.Tensor:
    out, router = model(x)
    return out.sum() + 0.1 * load_balancing_loss(router, out.device)


def main() -> int:
    args = model_run.parse_args(__doc__)
    model = build()
    debugger, finish = model_run.debugger(args)
    for step in range(args.steps):
        model.zero_grad()
        debugger.start(model)
        loss(model, batch(step)).backward()
        debugger.stop()
        debugger.step()
    finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
