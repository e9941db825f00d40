"""A small fully convolutional segmenter (UNet-like) exported from PyTorch with height and width as named dims
and built ONCE with `--dim H=64..256 --dim W=64..256`: a stride-2 5x5 convolution (Winograd over the input's
phases), a max pool, a transposed convolution and a nearest Resize to the skip's size (torch's
interpolate(size=...): Shape arithmetic folded to floor divisions of H and W), a Concat skip, a bilinear
Resize back to the input's size and an Add skip. The artifact matches onnxruntime at five sizes (square,
non-square, odd) on each target, and its arena equals a static build's at 256x256. Needs the optional torch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.golden import check_sizes, shared_model

torch = pytest.importorskip("torch")

SIZES = [(64, 64), (65, 97), (128, 77), (201, 256), (256, 256)]
RANGE = (64, 256)


class Segmenter(torch.nn.Module):
    def __init__(self, classes: int = 4):
        super().__init__()
        nn = torch.nn
        self.enc1 = nn.Conv2d(3, 8, 3, padding=1)
        self.enc2 = nn.Conv2d(8, 16, 5, stride=2, padding=2)
        self.mid = nn.Conv2d(16, 16, 3, padding=1)
        self.up = nn.ConvTranspose2d(16, 16, 2, stride=2)
        self.dec1 = nn.Conv2d(32, 16, 3, padding=1)
        self.dec2 = nn.Conv2d(16, 8, 3, padding=1)
        self.head = nn.Conv2d(8, classes, 1)

    def forward(self, image):
        F = torch.nn.functional
        e1 = F.relu(self.enc1(image))
        e2 = F.relu(self.enc2(e1))
        bottom = F.relu(self.mid(F.max_pool2d(e2, 2)))
        up = F.interpolate(self.up(bottom), size=e2.shape[-2:], mode="nearest")
        d1 = F.relu(self.dec1(torch.cat([up, e2], 1)))
        d2 = F.interpolate(d1, size=e1.shape[-2:], mode="bilinear", align_corners=False)
        return self.head(F.relu(self.dec2(d2) + e1))


@pytest.fixture(scope="module")
def fcn(tmp_path_factory) -> Path:
    def export(path):
        torch.manual_seed(0)
        with torch.no_grad():
            torch.onnx.export(Segmenter().eval(), torch.randn(1, 3, 64, 80), str(path), input_names=["image"],
                              output_names=["scores"], opset_version=17, dynamo=False,
                              dynamic_axes={"image": {2: "H", 3: "W"}, "scores": {2: "H", 3: "W"}})

    return shared_model(tmp_path_factory, "dynamic_fcn", export)


def feeds(size: tuple[int, int]) -> dict[str, np.ndarray]:
    return {"image": np.random.default_rng(size[0] * 1000 + size[1]).standard_normal((1, 3, *size)).astype(np.float32)}


def test_one_artifact_matches_at_every_size(fcn, target, tmp_path):
    import onnx

    report = check_sizes(onnx.load(str(fcn)), feeds, SIZES, target, tmp_path, rtol=1e-4, atol=1e-4,
                         dims={"H": RANGE, "W": RANGE}, arena_as_static=True, refused=((64, 257), "W must be within 64..256"))
    assert report["ops"]["Resize"] == 2 and report["ops"]["ConvTranspose"] == 1
    assert report["outputs"][0]["dims"] == [1, 4, "H", "W"]
