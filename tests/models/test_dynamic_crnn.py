"""A CRNN-style text-line recogniser exported from PyTorch with the width as a named dim and built ONCE with
`--dim W=32..640`: convolutions (one with BatchNorm), max pools that halve both axes, a classic CRNN pool
(kernel 2, stride (2, 1), width padding 1) and a ceil_mode one, the height collapsed by a mean (ReduceMean),
the columns as a sequence through a bidirectional LSTM and a bidirectional GRU, and a per-column linear
head with log-softmax (what a CTC decoder reads). The artifact matches onnxruntime at five widths on each
target, its arena equals a static build's at 640, and 641 is refused. Needs the optional torch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.golden import check_sizes, shared_model

torch = pytest.importorskip("torch")

WIDTHS = [32, 33, 101, 257, 640]
RANGE = (32, 640)
HEIGHT = 32


class Recogniser(torch.nn.Module):
    def __init__(self, classes: int = 12):
        super().__init__()
        nn = torch.nn
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2, ceil_mode=True),
            nn.Conv2d(16, 24, 3, padding=1), nn.ReLU(), nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        self.lstm = nn.LSTM(24, 16, bidirectional=True)
        self.gru = nn.GRU(32, 16, bidirectional=True)
        self.head = nn.Linear(32, classes)

    def forward(self, image):
        columns = self.features(image).mean(2).permute(2, 0, 1)  # [W', 1, 24]: the height collapsed
        sequence, _ = self.lstm(columns)
        sequence, _ = self.gru(sequence)
        return self.head(sequence).log_softmax(-1)


@pytest.fixture(scope="module")
def crnn(tmp_path_factory) -> Path:
    def export(path):
        torch.manual_seed(0)
        model = Recogniser().eval()
        with torch.no_grad():
            model.features[1].running_mean.uniform_(-0.5, 0.5)
            model.features[1].running_var.uniform_(0.5, 2.0)
            torch.onnx.export(model, torch.randn(1, 1, HEIGHT, 100), str(path), input_names=["image"],
                              output_names=["log_probs"], opset_version=17, dynamo=False,
                              dynamic_axes={"image": {3: "W"}, "log_probs": {0: "T"}})

    return shared_model(tmp_path_factory, "dynamic_crnn", export)


def feeds(width: int) -> dict[str, np.ndarray]:
    return {"image": np.random.default_rng(width).standard_normal((1, 1, HEIGHT, width)).astype(np.float32)}


def test_one_artifact_matches_at_every_width(crnn, target, tmp_path):
    import onnx

    report = check_sizes(onnx.load(str(crnn)), feeds, WIDTHS, target, tmp_path, rtol=1e-4, atol=1e-4, dims={"W": RANGE},
                         arena_as_static=True, refused=(641, "W must be within 32..640"))
    assert report["ops"]["LSTM"] == 1 and report["ops"]["GRU"] == 1
    assert report["outputs"][0]["shape"] == [161, 1, 12] and report["outputs"][0]["shape_min"] == [9, 1, 12]
