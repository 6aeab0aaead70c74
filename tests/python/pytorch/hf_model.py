"""Third-party models for hf_parity_test.py: HuggingFace transformers
models built from small config objects with random weights (nothing is
downloaded), trained for a few steps under msprobe or tprobe with one
config.json.

- ``gpt2``: a causal LM (GPT2LMHeadModel), labels given, so the loss is
  the model's own;
- ``bert``: an encoder (BertModel) with a padded attention mask;
- ``t5``: an encoder-decoder (T5ForConditionalGeneration), labels given;
- ``ddp-gpt2``: ``gpt2`` wrapped in DistributedDataParallel, one process
  per rank under torchrun (gloo on the CPU), each rank on its own half of
  the batch;
- ``fsdp-gpt2``: ``gpt2`` sharded with FSDP2 (``fully_shard`` on each
  block, then on the whole model), 2 ranks under torchrun as ``ddp-gpt2``;
  with ``--tool none`` it runs with no tool and writes, per rank,
  which Tensor.narrow calls narrow an unfilled all-gather buffer
  (AllGatherWatch);
- ``cnn``: a ResNet-style CNN (Conv2d, BatchNorm2d, ReLU(inplace=True),
  a residual add, pooling), the shape of torchvision's BasicBlock written
  out here: the torchvision wheel pip finds is a CUDA build whose compiled
  extension does not load against the CPU torch.
"""

import json
import os
import sys
import weakref

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, os.pardir, "support")]
import model_run  # noqa: E402


class BasicBlock(torch.nn.Module):
    """conv-bn-relu(inplace)-conv-bn, plus the input, then relu(inplace)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1,
                                     bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.relu = torch.nn.ReLU(inplace=True)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1,
                                     bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class ResNetLike(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.relu = torch.nn.ReLU(inplace=True)
        self.layer1 = BasicBlock(8)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        return self.fc(torch.flatten(self.pool(x), 1))


def build(name: str) -> tuple:
    """(model, inputs) for ``name``, seeded."""
    import transformers
    torch.manual_seed(0)
    if name == "gpt2":
        config = transformers.GPT2Config(
            vocab_size=64, n_positions=16, n_embd=16, n_layer=2, n_head=2,
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        model = transformers.GPT2LMHeadModel(config)
        ids = torch.randint(0, 64, (2, 8))
        return model, {"input_ids": ids, "labels": ids}
    if name == "t5":
        config = transformers.T5Config(
            vocab_size=64, d_model=16, d_kv=8, d_ff=32, num_layers=2,
            num_decoder_layers=2, num_heads=2, dropout_rate=0.0,
            decoder_start_token_id=0, pad_token_id=0)
        model = transformers.T5ForConditionalGeneration(config)
        ids = torch.randint(1, 64, (2, 8))
        labels = torch.randint(1, 64, (2, 6))
        return model, {"input_ids": ids, "labels": labels}
    if name == "cnn":
        return ResNetLike(), {"x": torch.randn(4, 3, 16, 16)}
    config = transformers.BertConfig(
        vocab_size=64, hidden_size=16, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=32,
        max_position_embeddings=16, hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0)
    model = transformers.BertModel(config)
    ids = torch.randint(0, 64, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0  # the second sequence is padded
    return model, {"input_ids": ids, "attention_mask": mask}


def relu_input_gradients(steps: int) -> list:
    """The truth for the CNN's Functional.relu.N.backward.output[0]: per
    step, the gradient of each ReLU call's input in call order, from
    autograd on the same seeded model and inputs with the ReLUs made
    out-of-place (the same values; nothing is overwritten)."""
    model, inputs = build("cnn")
    relus = [m for m in model.modules() if isinstance(m, torch.nn.ReLU)]
    for relu in relus:
        relu.inplace = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    grads: list = []

    def keep(module, args) -> None:
        slot = len(grads[-1])
        grads[-1].append(None)

        def store(grad: torch.Tensor) -> None:
            grads[-1][slot] = grad.detach().clone()
        args[0].register_hook(store)
    for relu in relus:
        relu.register_forward_pre_hook(keep)
    for _ in range(steps):
        optimizer.zero_grad()
        grads.append([])
        loss_of(model(**inputs)).backward()
        optimizer.step()
    return grads


def loss_of(output) -> torch.Tensor:
    if isinstance(output, torch.Tensor):
        return output.pow(2).mean()
    if getattr(output, "loss", None) is not None:
        return output.loss
    return output.last_hidden_state.float().pow(2).mean()


def distributed(name: str) -> tuple:
    """``build`` of the model after "ddp-", wrapped in DDP on the process
    group torchrun describes; each rank takes its own sample."""
    import torch.distributed as dist
    dist.init_process_group("gloo")
    model, inputs = build(name[len("ddp-"):])
    rank = dist.get_rank()
    inputs = {k: v[rank:rank + 1] for k, v in inputs.items()}
    return torch.nn.parallel.DistributedDataParallel(model), inputs


def sharded(name: str) -> tuple:
    """``build`` of the model after "fsdp-", each GPT-2 block and then the
    whole model sharded with FSDP2 on the process group torchrun
    describes; each rank takes its own sample."""
    import torch.distributed as dist
    from torch.distributed.fsdp import fully_shard
    dist.init_process_group("gloo")
    model, inputs = build(name[len("fsdp-"):])
    for block in model.transformer.h:
        fully_shard(block)
    fully_shard(model)
    rank = dist.get_rank()
    inputs = {k: v[rank:rank + 1] for k, v in inputs.items()}
    return model, inputs


class AllGatherWatch:
    """The truth for hf_parity_test.py's FSDP rule, from a run with no
    tool: for each step, each Tensor.narrow call between start() and stop()
    in call order, whether the tensor it narrows is an all-gather output
    buffer that nothing has written yet: the very tensor torch.empty
    returned, later passed as the output of dist.all_gather_single (FSDP2's
    all-gather, which fills it), and not passed to it before the narrow.
    Such memory holds whatever was there before, so the statistics of the
    narrow's input and output are arbitrary. It has the debugger's
    start/stop/step, so the training loop is the same."""

    def __init__(self) -> None:
        self.steps: list = [[]]
        self._recording = False
        self._fresh: dict = {}  # id -> weakref of each unfilled torch.empty
        self._pending: list = []  # (step, call, weakref of the buffer)
        empty, narrow = torch.empty, torch.Tensor.narrow
        gather = torch.distributed.all_gather_single

        def watched_empty(*args, **kwargs):
            tensor = empty(*args, **kwargs)
            if self._recording:
                self._fresh[id(tensor)] = weakref.ref(tensor)
            return tensor

        def watched_narrow(tensor, *args, **kwargs):
            if self._recording:
                fresh = self._fresh.get(id(tensor))
                step = self.steps[-1]
                step.append(False)
                if fresh is not None and fresh() is tensor:
                    self._pending.append((step, len(step) - 1,
                                          weakref.ref(tensor)))
            return narrow(tensor, *args, **kwargs)

        def watched_gather(output_tensor, *args, **kwargs):
            self._fresh.pop(id(output_tensor), None)
            for step, call, buffer in self._pending:
                if buffer() is output_tensor:
                    step[call] = True
            self._pending = [p for p in self._pending
                             if p[2]() is not output_tensor]
            return gather(output_tensor, *args, **kwargs)
        torch.empty = watched_empty
        torch.Tensor.narrow = watched_narrow
        torch.distributed.all_gather_single = watched_gather

    def start(self, model) -> None:
        self._recording = True

    def stop(self) -> None:
        self._recording = False

    def step(self) -> None:
        self.steps.append([])

    def write(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.steps[:-1], f)


def main() -> int:
    args = model_run.parse_args(
        __doc__, tools=("msprobe", "tprobe", "none"),
        model=["gpt2", "bert", "t5", "cnn", "ddp-gpt2", "fsdp-gpt2"])
    if args.model.startswith("ddp-"):
        model, inputs = distributed(args.model)
    elif args.model.startswith("fsdp-"):
        model, inputs = sharded(args.model)
    else:
        model, inputs = build(args.model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if args.tool == "none":
        debugger = AllGatherWatch()
        os.makedirs(args.dump_path, exist_ok=True)
        finish = lambda: debugger.write(  # noqa: E731
            os.path.join(args.dump_path,
                         f"rank{torch.distributed.get_rank()}.json"))
    else:
        debugger, finish = model_run.debugger(args, f"-{args.model}")
    for _ in range(args.steps):
        optimizer.zero_grad()
        debugger.start(model)
        loss = loss_of(model(**inputs))
        loss.backward()
        debugger.stop()
        optimizer.step()
        debugger.step()
    finish()
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
