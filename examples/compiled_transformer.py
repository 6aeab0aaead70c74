#!/usr/bin/env python3
"""A small two-block transformer trained for a few steps on the CPU, eager or
under torch.compile, with tprobe dumping it; then says where the tree is.

    PYTHONPATH=build/python .venv/bin/python examples/compiled_transformer.py \
        [--compile | --compile-blocks] [--plant] [--level L0|L1|mix] \
        [--steps N] [--out DIR] \
        [--dump-steps N ...] [--tprobed PATH | --socket PATH] [--no-tool]

The model has what a compiled model's dump must get right: token and
position embeddings, per-block LayerNorms, attention through
F.scaled_dot_product_attention, a GELU MLP, a head tied to the token
embedding, and a module whose forward works in place (`gate`: `+=` on a
module's output, then ReLU(inplace=True)), called twice in one forward, so
its entries are `Module.gate.Gate.forward.0` and `.1`.

--compile runs `torch.compile(model)` (Inductor; on the CPU its C++
backend) and debugger.start() gets the compiled model. At the end the script
prints Dynamo's counts: graph breaks, graphs and compiled frames. A run
without --compile and one with it, same seeds and config, are meant to give
trees with the same entry names in the same order, their statistics apart
only by compile's float rounding; `tprobe compare` pairs every row.
--compile-blocks compiles each block alone instead, as TorchTitan does
(`blocks[i] = torch.compile(block)`), and debugger.start() gets the model.

--plant makes compiled code depart from eager in one known module, as a
kernel that computes and stores in reduced precision would: under compile
only (torch.compiler.is_compiling()), the GELU of blocks.1's MLP runs in
bfloat16 and returns bfloat16 (the MLP casts it back for fc2; in eager that
cast does nothing). The script names the module; `tprobe compare
COMPILED_TREE EAGER_TREE` names it as the first divergence (its output's
dtype). A rounding alone would not do: Inductor drops a float32 -> bfloat16
-> float32 round trip inside a fused kernel (its emulate_precision_casts is
off), and compare's msprobe verdicts pass a module whose output norm moved
by less than 10 % while its inputs' norms did not move.

tprobe uses the daemon on --socket (or $TPROBE_SOCKET) and starts none;
otherwise it starts a private tprobed when none answers on the default
socket (--tprobed names the binary, else $TPROBED or the one beside the
package), and the files are complete when the script exits. Seeds are
fixed: two runs with the same flags train alike.
"""

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, DIM, HEADS, LAYERS, SEQ, BATCH = 64, 32, 2, 2, 8, 2
# The module --plant changes, as a module path of the model.
PLANTED = "blocks.1.mlp.act"


class Gelu(nn.Module):
    """GELU; with `planted` set, under compile only, in bfloat16 (a
    reduced-precision kernel that eager does not have)."""

    def __init__(self) -> None:
        super().__init__()
        self.planted = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.planted and torch.compiler.is_compiling():
            return F.gelu(x.to(torch.bfloat16))
        return F.gelu(x)


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
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(DIM, 4 * DIM)
        self.act = Gelu()
        self.fc2 = nn.Linear(4 * DIM, DIM)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)).to(x.dtype))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(DIM)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(DIM)
        self.mlp = Mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Gate(nn.Module):
    """In-place ops: the input added into the projection's output, then a
    ReLU(inplace=True) on it."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(DIM, DIM)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        h += x  # in place on a module's output
        return self.relu(h)


class Transformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Embedding(SEQ, DIM)
        self.gate = Gate()
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.tok.weight  # tied
        nn.init.normal_(self.tok.weight, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.gate(self.tok(idx) + self.pos(torch.arange(idx.shape[1])))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(self.gate(x)))  # gate's second call


def batches(generator: torch.Generator):
    """A toy task: predict the next token of a sequence that counts up."""
    while True:
        start = torch.randint(0, VOCAB, (BATCH, 1), generator=generator)
        seq = (start + torch.arange(SEQ + 1)) % VOCAB
        yield seq[:, :-1], seq[:, 1:]


def dynamo_counts() -> str:
    """Dynamo's graph breaks, graphs and compiled frames so far."""
    from torch._dynamo.utils import counters
    breaks = sum(counters["graph_break"].values())
    graphs = counters["stats"]["unique_graphs"]
    frames = counters["frames"]["ok"]
    return (f"dynamo: {breaks} graph breaks, {graphs} graphs, "
            f"{frames} compiled frames")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[2:]))
    ap.add_argument("--compile", action="store_true",
                    help="train torch.compile(model) (Inductor)")
    ap.add_argument("--compile-blocks", action="store_true",
                    help="compile each block alone: blocks[i] = "
                    "torch.compile(block)")
    ap.add_argument("--plant", action="store_true",
                    help=f"with --compile or --compile-blocks: {PLANTED}'s "
                    "GELU in bfloat16 under compile only")
    ap.add_argument("--level", choices=("L0", "L1", "mix"), default="L0",
                    help="tprobe's dump level (default L0)")
    ap.add_argument("--steps", type=int, default=3,
                    help="training steps (default 3)")
    ap.add_argument("--dump-steps", type=int, nargs="+", metavar="N",
                    help="the steps to dump (default: every step)")
    ap.add_argument("--out", default="dump",
                    help="the dump root (default ./dump)")
    ap.add_argument("--config", default=os.path.join(HERE, "config_l0.json"),
                    help="the config.json; --level, --dump-steps and --out "
                    "override it (default examples/config_l0.json)")
    ap.add_argument("--tprobed", metavar="PATH",
                    help="the tprobed to start when no daemon answers")
    ap.add_argument("--socket", metavar="PATH",
                    help="the socket of a running tprobed to use")
    ap.add_argument("--no-tool", action="store_true",
                    help="train without tprobe (a baseline)")
    args = ap.parse_args()
    if args.compile and args.compile_blocks:
        ap.error("--compile and --compile-blocks: choose one")
    compiled = args.compile or args.compile_blocks
    if args.plant and not compiled:
        ap.error("--plant changes compiled code only: add --compile or "
                 "--compile-blocks")
    if args.tprobed:
        os.environ["TPROBED"] = os.path.abspath(args.tprobed)
    if args.socket:
        os.environ["TPROBE_SOCKET"] = os.path.abspath(args.socket)

    torch.manual_seed(0)
    torch.set_num_threads(1)
    debugger = None
    if not args.no_tool:
        from tprobe.torch import PrecisionDebugger
        debugger = PrecisionDebugger(config_path=args.config,
                                     dump_path=args.out, level=args.level,
                                     step=args.dump_steps)
    net = Transformer()
    if args.plant:
        net.get_submodule(PLANTED).planted = True
        print(f"planted: {PLANTED} (Module.{PLANTED}.Gelu.forward.0) runs "
              "in bfloat16 under compile", flush=True)
    model = torch.compile(net) if args.compile else net
    if args.compile_blocks:
        for i, block in enumerate(net.blocks):
            net.blocks[i] = torch.compile(block)
    optimizer = torch.optim.AdamW(net.parameters(), lr=3e-3)
    data = batches(torch.Generator().manual_seed(1))
    for step in range(args.steps):
        inputs, targets = next(data)
        optimizer.zero_grad(set_to_none=True)
        if debugger:
            debugger.start(model)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        if debugger:
            debugger.stop()
            debugger.step()
        print(f"step {step} loss {loss.item():.4f}", flush=True)

    if compiled:
        print(dynamo_counts(), flush=True)
    if debugger:
        print(f"dump tree: {os.path.abspath(args.out)} (step<N>/<rank>/)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
