"""Train and export samples/textgen/textgen.onnx: a character-level GPT-2 (transformers' GPT2LMHeadModel, 2
layers, width 48, a context of 256 characters, 370 KB of float32 weights) trained on corpus.txt (two
public-domain texts) with a key/value cache in its inputs and outputs, so one mlcc artifact generates text a
token at a time:

    python samples/textgen/train.py          # seeded; about five minutes of CPU

The ONNX model takes `input_ids` [1, 1] (one character's id) and, per layer, `past_key_L` / `past_value_L`
[1, heads, past, head width] (past = 0 on the first call), and returns `logits` [1, 1, vocabulary] and
`present_key_L` / `present_value_L` with past + 1 positions, fed back as the next call's past. The tokenizer is
VOCABULARY below: newline, then printable ASCII (generate.js holds the same string).
"""

from __future__ import annotations

import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
VOCABULARY = "\n" + "".join(chr(c) for c in range(32, 127))
CONTEXT = 256  # positions the model knows; the cache's past length runs 0..CONTEXT - 1
LAYERS, HEADS, WIDTH = 2, 3, 48


def encode(text: str) -> list[int]:
    return [VOCABULARY.index(c) for c in text]


def model(seed: int = 0, vocabulary: int = len(VOCABULARY), layers: int = LAYERS, heads: int = HEADS,
          width: int = WIDTH, context: int = CONTEXT, dropout: float = 0.1):
    """A GPT2LMHeadModel with seeded random weights (eager attention: what both exporters trace plainly)."""
    import torch
    import transformers

    config = transformers.GPT2Config(vocab_size=vocabulary, n_positions=context, n_embd=width, n_layer=layers,
                                     n_head=heads, resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
                                     attn_implementation="eager")
    torch.manual_seed(seed)
    return transformers.GPT2LMHeadModel(config).eval()


def past_names(layers: int) -> list[str]:
    return [f"past_{kind}_{layer}" for layer in range(layers) for kind in ("key", "value")]


def export(lm, path: Path, dynamo: bool = False) -> Path:
    """The one-token step with its cache as tensors: input_ids [1, 1] and the past per layer in, logits and the
    present per layer out, the past length a named dim `past` (legacy exporter: dynamic_axes; dynamo:
    torch.export's Dim, 0..context - 1)."""
    import torch
    from transformers import DynamicCache

    config = lm.config
    layers, heads, width = config.n_layer, config.n_head, config.n_embd

    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, *past):
            cache = DynamicCache(config=config)
            for layer in range(layers):
                cache.update(past[2 * layer], past[2 * layer + 1], layer)
            out = self.lm(input_ids=input_ids, past_key_values=cache, use_cache=True)
            return (out.logits, *(t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)))

    names = past_names(layers)
    outputs = ["logits", *(n.replace("past_", "present_") for n in names)]
    example = (torch.zeros(1, 1, dtype=torch.int64), *(torch.zeros(1, heads, 3, width // heads) for _ in names))
    with torch.no_grad():
        if dynamo:
            past = torch.export.Dim("past", min=0, max=config.n_positions - 1)
            torch.onnx.export(Step().eval(), example, str(path), input_names=["input_ids", *names],
                              output_names=outputs, dynamo=True, external_data=False,
                              dynamic_shapes={"input_ids": None, "past": tuple({2: past} for _ in names)})
        else:
            torch.onnx.export(Step().eval(), example, str(path), input_names=["input_ids", *names],
                              output_names=outputs, opset_version=17, dynamo=False,
                              dynamic_axes={**{n: {2: "past"} for n in names},
                                            **{n: {2: "past_and_new"} for n in outputs[1:]}})
    return path


def train(lm, text: str, steps: int = 1500, batch: int = 16, window: int = 64, seed: int = 0) -> float:
    """Next-character prediction on random windows of `text`; returns the last loss."""
    import torch

    torch.manual_seed(seed)
    data = torch.tensor(encode(text), dtype=torch.int64)
    optimizer = torch.optim.AdamW(lm.parameters(), lr=3e-3, weight_decay=0.01)
    lm.train()
    loss = None
    for step in range(steps):
        for group in optimizer.param_groups:  # cosine decay to a tenth
            group["lr"] = 3e-3 * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / steps)))
        starts = torch.randint(0, len(data) - window - 1, (batch,))
        chunk = torch.stack([data[s:s + window + 1] for s in starts])
        loss = lm(input_ids=chunk[:, :-1], labels=chunk[:, :-1].clone()).loss  # labels shift inside
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.3f}")
    lm.eval()
    return float(loss.item())


def main() -> None:
    import torch

    torch.set_num_threads(1)  # a small model: one thread wastes least on a busy machine
    lm = model(seed=2026, dropout=0.0)  # to learn a short text by heart
    train(lm, (HERE / "corpus.txt").read_text())
    export(lm, HERE / "textgen.onnx")
    print(f"wrote {HERE / 'textgen.onnx'}")


if __name__ == "__main__":
    main()
