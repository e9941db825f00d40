"""A BERT encoder (transformers' BertModel, a small random config, no downloads) exported with the sequence as
a named dim and built ONCE with `--dim seq=1..128`: the artifact matches onnxruntime at five sequence lengths
on each target, its attention is still the fused kernel, its arena equals a static build's at 128, and 129 is
refused. Needs the optional test dependencies torch and transformers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.golden import check_sizes, shared_model

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

SIZES = [1, 5, 31, 64, 128]
RANGE = (1, 128)


def export_bert(path: Path, hidden: int = 64, layers: int = 2, heads: int = 4, intermediate: int = 128,
                longest: int = RANGE[1]) -> None:
    """BertModel (random weights, seed 0) giving its last hidden state, exported with the sequence as the dim
    `seq`; benchmarks/dynamic_shapes.py times it too."""
    config = transformers.BertConfig(vocab_size=100, hidden_size=hidden, num_hidden_layers=layers,
                                     num_attention_heads=heads, intermediate_size=intermediate,
                                     max_position_embeddings=longest, attn_implementation="eager")
    torch.manual_seed(0)
    encoder = transformers.BertModel(config, add_pooling_layer=False).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids, mask = torch.zeros(1, 16, dtype=torch.int64), torch.ones(1, 16, dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(LastHiddenState().eval(), (ids, mask), str(path), input_names=["input_ids", "attention_mask"],
                          output_names=["y"], opset_version=14, dynamo=False,
                          dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}, "y": {1: "seq"}})


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return shared_model(tmp_path_factory, "dynamic_bert", export_bert)


def feeds(size: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(size)
    mask = np.ones((1, size), np.int64)
    mask[0, size * 3 // 4 + 1:] = 0  # padding keys at the end
    return {"input_ids": rng.integers(0, 100, (1, size)).astype(np.int64), "attention_mask": mask}


def test_one_artifact_matches_at_every_size(bert, target, tmp_path):
    import onnx

    report = check_sizes(onnx.load(str(bert)), feeds, SIZES, target, tmp_path, rtol=1e-4, atol=1e-4, dims={"seq": RANGE},
                         arena_as_static=True, refused=(129, "seq must be within 1..128"))
    assert report["ops"]["FusedAttention"] == 2 and report["dims"] == [{"name": "seq", "min": 1, "max": 128, "c_member": "seq"}]
    assert report["outputs"][0]["dims"] == [1, "seq", 64] and report["arena_bytes_at_min"] < report["arena_bytes"]
