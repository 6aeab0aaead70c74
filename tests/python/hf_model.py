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
- ``cnn``: a ResNet-style CNN (Conv2d, BatchNorm2d, ReLU(inplace=True),
  a residual add, pooling), the shape of torchvision's BasicBlock written
  out here: the torchvision wheel pip finds is a CUDA build whose compiled
  extension does not load against the CPU torch.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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


def main() -> int:
    args = model_run.parse_args(
        __doc__, model=["gpt2", "bert", "t5", "cnn", "ddp-gpt2"])
    if args.model.startswith("ddp-"):
        model, inputs = distributed(args.model)
    else:
        model, inputs = build(args.model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
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
    if args.model.startswith("ddp-"):
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
