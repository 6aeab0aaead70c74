#!/usr/bin/env python3
"""Trains a small GPT-style model for a few steps with tprobe dumping on,
then says where the dump tree is.

    /usr/bin/python3 examples/train_gpt.py [--config CONFIG] [--dump-path DIR]
                                           [--steps N]

The default config is examples/config_l0.json (statistics, level L0, dump
path ./dump). tprobe uses the daemon on $TPROBE_SOCKET, or starts a private
tprobed when none answers; the files are complete when the script exits.
The script runs unchanged under msprobe: change the import line to
``from msprobe.pytorch import PrecisionDebugger``.
"""

import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from tprobe.torch import PrecisionDebugger

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, DIM, HEADS, LAYERS, SEQ, BATCH = 256, 64, 4, 2, 32, 8


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, HEADS, d // HEADS).transpose(1, 2)
                   for z in (q, k, v))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // HEADS)
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        y = torch.matmul(F.softmax(scores, dim=-1), v)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(DIM)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(),
                                 nn.Linear(4 * DIM, DIM))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(SEQ, DIM)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def batches(generator: torch.Generator):
    """A toy task: predict the next token of a sequence that counts up."""
    while True:
        start = torch.randint(0, VOCAB, (BATCH, 1), generator=generator)
        seq = (start + torch.arange(SEQ + 1)) % VOCAB
        yield seq[:, :-1], seq[:, 1:]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default=os.path.join(HERE, "config_l0.json"))
    ap.add_argument("--dump-path", help="overrides the config's dump_path")
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)
    debugger = PrecisionDebugger(config_path=args.config,
                                 dump_path=args.dump_path)
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    data = batches(torch.Generator().manual_seed(1))
    for step in range(args.steps):
        inputs, targets = next(data)
        optimizer.zero_grad(set_to_none=True)
        debugger.start(model)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        debugger.stop()
        debugger.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)

    dump_path = args.dump_path
    if dump_path is None:
        with open(args.config, encoding="utf-8") as f:
            dump_path = json.load(f).get("dump_path", "./dump_path")
    print(f"dump tree: {os.path.abspath(dump_path)} (step<N>/<rank>/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
