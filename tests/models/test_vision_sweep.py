"""The vision sweep's machinery (benchmarks/sweep/vision_*.py) in CI, on a torch-only model: torchvision and timm
need the separate 5.5 GB export venv, which CI does not install (the README says why), so the sweep itself runs
as `python -m benchmarks.sweep.vision_models` with its last result committed. Here a small CNN with the parts the
sweep's models are made of (conv + BatchNorm + ReLU, a depthwise residual, adaptive pooling, multi-head attention
over the pooled cells, a zero-initialised head as torchvision's ViT has, a dict of outputs as segmentation models
return) goes through the sweep's own randomisation, export (both exporters) and check against onnxruntime."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="scripts/test.sh installs it (pip install -e '.[hf]')")
pytest.importorskip("onnxscript", reason="scripts/test.sh installs it (pip install -e '.[hf]')")

from benchmarks.sweep import vision_export, vision_models  # noqa: E402


class _SmallVisionNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.BatchNorm2d(16),
                                        torch.nn.ReLU())
        self.depthwise = torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1, groups=16),
                                             torch.nn.BatchNorm2d(16), torch.nn.Hardswish())
        self.pool = torch.nn.AdaptiveAvgPool2d(2)
        self.attention = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.head = torch.nn.Linear(16, 5)
        torch.nn.init.zeros_(self.head.weight)  # as torchvision's ViT: the sweep's randomisation must undo it
        torch.nn.init.zeros_(self.head.bias)

    def forward(self, x):
        features = self.stem(x)
        features = features + self.depthwise(features)
        tokens = self.pool(features).flatten(2).transpose(1, 2)  # (1, 4, 16)
        attended, _ = self.attention(tokens, tokens, tokens, need_weights=False)
        return {"logits": self.head(attended.mean(1)), "features": features}


@pytest.mark.parametrize("exporter", ["legacy", "dynamo"])
def test_sweep_machinery_on_a_small_vision_net(tmp_path, exporter):
    torch.manual_seed(0)
    model = _SmallVisionNet()
    vision_export._randomize(model)
    assert model.head.weight.abs().max() > 0 and model.stem[1].running_var.min() >= 0.5
    inputs = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    path = tmp_path / f"small-{exporter}.onnx"
    # The legacy export runs with gradients on: under no_grad MultiheadAttention's fast path is not exportable.
    vision_export.export_model(model.eval(), exporter, path, inputs)
    targets = ["host", "wasm32"] if exporter == "legacy" else ["host"]
    results = [vision_models.Result("small", exporter, t) for t in targets]
    vision_models.check_export(path, {"input": inputs}, results, tmp_path)
    failed = [f"{r.target}: {r.status}: {r.reason}" for r in results if r.status != "pass"]
    assert not failed, "\n".join(failed)
    assert all(r.largest_output > 0.1 for r in results)  # the head is live: the comparison can fail
