"""Golden tests of the image-sampling ops: GridSample, AffineGrid, RoiAlign, DeformConv, and SpaceToDepth's
CRD mode, against onnxruntime (onnx's reference where onnxruntime lacks the form), on every target."""

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from mlcc.errors import MlccError
from tests.golden import build_and_run, check_model, node_model, rand


def reference(model, feeds: dict) -> dict:
    names = [o.name for o in model.graph.output]
    return dict(zip(names, ReferenceEvaluator(model).run(None, feeds)))


# --- GridSample ----------------------------------------------------------------------------------

def sample_grid(*shape, seed: int) -> np.ndarray:
    """Points mostly inside [-1, 1], some beyond (up to 2.5 borders away) to exercise every padding."""
    return rand(*shape, seed=seed, low=-2.2, high=2.2)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(mode, padding, align, target, tmp_path):
    x = rand(2, 3, 5, 7, seed=1)
    grid = sample_grid(2, 4, 6, 2, seed=2)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": align}
    model = node_model("GridSample", {"x": x, "grid": grid}, ["y"], attrs, opset=16)
    check_model(model, {"x": x, "grid": grid}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode, padding, target, tmp_path):
    x = rand(1, 2, 3, 4, 5, seed=3)
    grid = sample_grid(1, 2, 3, 4, 3, seed=4)
    attrs = {"mode": mode, "padding_mode": padding, "align_corners": 0}
    model = node_model("GridSample", {"x": x, "grid": grid}, ["y"], attrs, opset=20)
    check_model(model, {"x": x, "grid": grid}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["bicubic", "bilinear"])
def test_grid_sample_single_pixel_extent(mode, target, tmp_path):
    # an extent of 1 with align_corners leaves no room to reflect in: the coordinate pins to 0
    x = rand(1, 2, 1, 6, seed=5)
    grid = sample_grid(1, 3, 4, 2, seed=6)
    attrs = {"mode": mode, "padding_mode": "reflection", "align_corners": 1}
    model = node_model("GridSample", {"x": x, "grid": grid}, ["y"], attrs, opset=16)
    check_model(model, {"x": x, "grid": grid}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["cubic", "linear", "nearest"])
def test_grid_sample_double(mode, target, tmp_path):
    # onnxruntime has no double GridSample: onnx's reference is the oracle; it denormalizes in float32
    x = rand(1, 2, 4, 6, seed=7, dtype=np.float64)
    grid = sample_grid(1, 3, 4, 2, seed=8).astype(np.float64)
    attrs = {"mode": mode, "padding_mode": "reflection", "align_corners": 0}
    model = node_model("GridSample", {"x": x, "grid": grid}, ["y"], attrs, opset=20)
    check_model(model, {"x": x, "grid": grid}, target, tmp_path, rtol=1e-4, atol=1e-6,
                expected=reference(model, {"x": x, "grid": grid}))


# --- SpaceToDepth CRD (opset 28) ----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes(mode, target, tmp_path):
    x = rand(2, 3, 4, 6, seed=7)
    model = node_model("SpaceToDepth", {"x": x}, ["y"], {"blocksize": 2, "mode": mode}, opset=28)
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0, expected=reference(model, {"x": x}))
