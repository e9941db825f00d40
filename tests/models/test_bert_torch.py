"""A small BERT-like encoder written here in torch.nn, exported by PyTorch (no downloads), compiled at -O2.

The pattern passes must leave one fused attention per layer, LayerNormalization for every layer norm and Gelu
for every GELU however the exporter spelled them (the default torch.export-based exporter, the legacy
TorchScript one at opset 14 that decomposes LayerNorm and GELU, and hand-written formulas as the original
BERT code has them), and the model must still match onnxruntime on each target. Needs the optional test
dependency torch (CPU wheel; onnxscript for the default exporter).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from tests.golden import check_model, shared_model

torch = pytest.importorskip("torch")
nn = torch.nn

VOCAB, SEQ, HIDDEN, HEADS, LAYERS, FFN = 100, 16, 64, 4, 2, 256
DECOMPOSED = {"ReduceMean", "Sqrt", "Pow", "Erf", "Tanh", "Exp", "ReduceSum", "ReduceMax", "Softmax"}


class HandWrittenLayerNorm(nn.Module):
    """As the original BERT code: (x - mean) / sqrt(var + eps), then weight and bias."""

    def __init__(self, hidden, eps=1e-12):
        super().__init__()
        self.weight, self.bias, self.eps = nn.Parameter(torch.ones(hidden)), nn.Parameter(torch.zeros(hidden)), eps

    def forward(self, x):
        u = x.mean(-1, keepdim=True)
        s = (x - u).pow(2).mean(-1, keepdim=True)
        return self.weight * ((x - u) / torch.sqrt(s + self.eps)) + self.bias


def hand_written_gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class Layer(nn.Module):
    def __init__(self, hand_written: bool):
        super().__init__()
        norm = (lambda: HandWrittenLayerNorm(HIDDEN)) if hand_written else (lambda: nn.LayerNorm(HIDDEN, eps=1e-12))
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN) for _ in range(4))
        self.norm1, self.norm2 = norm(), norm()
        self.up, self.down = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)
        self.gelu = hand_written_gelu if hand_written else nn.GELU()

    def heads(self, x):
        return x.view(x.shape[0], SEQ, HEADS, HIDDEN // HEADS).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.heads(self.q(x)), self.heads(self.k(x)), self.heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS) + mask
        context = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(x.shape[0], SEQ, HIDDEN)
        x = self.norm1(x + self.o(context))
        return self.norm2(x + self.down(self.gelu(self.up(x))))


class Bert(nn.Module):
    def __init__(self, hand_written: bool = False):
        super().__init__()
        self.words, self.positions = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(SEQ, HIDDEN)
        self.norm = HandWrittenLayerNorm(HIDDEN) if hand_written else nn.LayerNorm(HIDDEN, eps=1e-12)
        self.layers = nn.ModuleList(Layer(hand_written) for _ in range(LAYERS))

    def forward(self, input_ids, attention_mask):
        x = self.norm(self.words(input_ids) + self.positions.weight)
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0  # padding keys get -1e4
        for layer in self.layers:
            x = layer(x, mask)
        return x


class TorchEncoder(nn.Module):
    """nn.TransformerEncoder (GELU feed-forward, key padding mask) on float inputs."""

    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(HIDDEN, HEADS, FFN, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)

    def forward(self, x, padding):
        return self.encoder(x, src_key_padding_mask=padding)


def _export(module, args, names, path, exporter):
    kwargs = {"dynamo": False, "opset_version": 14} if exporter == "legacy" else {}
    if exporter == "default":
        pytest.importorskip("onnxscript")  # the torch.export-based exporter writes through it
    with torch.no_grad():
        torch.onnx.export(module.eval(), args, str(path), input_names=names, output_names=["y"], **kwargs)


def bert_inputs():
    ids = torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(1, SEQ, dtype=torch.int64)
    mask[0, 12:] = 0
    return ids, mask


VARIANTS = {
    "default_exporter": lambda: (Bert(), bert_inputs(), ["input_ids", "attention_mask"], "default"),
    "legacy_exporter_opset14": lambda: (Bert(), bert_inputs(), ["input_ids", "attention_mask"], "legacy"),
    "hand_written_formulas": lambda: (Bert(hand_written=True), bert_inputs(), ["input_ids", "attention_mask"], "default"),
    "transformer_encoder": lambda: (TorchEncoder(), (torch.randn(1, SEQ, HIDDEN, generator=torch.Generator().manual_seed(2)),
                                                     torch.arange(SEQ)[None, :] >= 12), ["x", "padding"], "default"),
}
# per variant: (attention, LayerNormalization, Gelu) nodes expected after the pattern passes
EXPECTED = {name: (LAYERS, 2 * LAYERS + (name != "transformer_encoder"), LAYERS) for name in VARIANTS}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """name -> (model, feeds); exports are shared by the xdist workers through the common temp folder
    (a torch.export-based export takes seconds)."""
    import onnx

    def get(name):
        torch.manual_seed(0)
        module, args, names, exporter = VARIANTS[name]()
        path = shared_model(tmp_path_factory, f"bert_torch_{name}", lambda path: _export(module, args, names, path, exporter))
        return onnx.load(str(path)), {n: a.numpy() for n, a in zip(names, args)}

    return get


@pytest.mark.parametrize("name", VARIANTS)
def test_patterns_fuse_and_numerics_match(name, exported, target, tmp_path):
    model, feeds = exported(name)
    after = {}

    def keep(pass_name, graph):
        if pass_name == "recognise_attention":
            after.update(Counter(n.op_type for n in graph.nodes))

    report = check_model(model, feeds, target, tmp_path, rtol=1e-4, atol=1e-4, after_pass=keep)
    attention, layer_norms, gelus = EXPECTED[name]
    assert (after["FusedAttention"], after["LayerNormalization"], after["Gelu"]) == (attention, layer_norms, gelus)
    assert not DECOMPOSED & set(after), after
    final = report["ops"]
    assert final["FusedAttention"] == attention and final["LayerNormalization"] == layer_norms
    assert not DECOMPOSED & set(final) and "Gelu" not in final  # each Gelu went into its Gemm's epilogue
    print(f"{name}: {sum(report['ops_before'].values())} ops before, {sum(final.values())} after: {dict(sorted(final.items()))}")
