"""Third-party models for hf_parity_test.py: HuggingFace transformers
models built from small config objects with random weights (nothing is
downloaded), trained for a few steps under msprobe or tprobe with one
config.json.

- ``gpt2``: a causal LM (GPT2LMHeadModel), labels given, so the loss is
  the model's own;
- ``bert``: an encoder (BertModel) with a padded attention mask.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model_run  # noqa: E402


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


def loss_of(output) -> torch.Tensor:
    if getattr(output, "loss", None) is not None:
        return output.loss
    return output.last_hidden_state.float().pow(2).mean()


def main() -> int:
    args = model_run.parse_args(__doc__, model=["gpt2", "bert"])
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
