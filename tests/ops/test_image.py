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


# --- AffineGrid ----------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [[2, 3, 5, 6], [2, 1, 3, 4, 5], [1, 1, 1, 4]], ids=["2d", "3d", "one_row"])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid(size, align, target, tmp_path):
    spatial = len(size) - 2
    theta = rand(size[0], spatial, spatial + 1, seed=9)
    model = node_model("AffineGrid", {"theta": theta}, ["grid"], {"align_corners": align}, opset=20,
                       initializers={"size": np.array(size, np.int64)})
    expected = None
    if size[2] == 1 and align:
        # a single row sits at y = 0 as in PyTorch (onnxruntime puts it at 1, onnx's reference at -1)
        xs = np.linspace(-1, 1, size[3])
        expected = {"grid": np.einsum("njk,wk->nwj", theta, np.stack([xs, np.zeros_like(xs), np.ones_like(xs)], 1))
                    [:, None].astype(np.float32)}
    check_model(model, {"theta": theta}, target, tmp_path, rtol=1e-5, atol=1e-6, expected=expected)


def test_affine_grid_then_grid_sample(target, tmp_path):
    # the pair a spatial transformer network exports
    import onnx
    from onnx import helper

    x = rand(2, 3, 6, 7, seed=10)
    theta = rand(2, 2, 3, seed=11, low=-0.8, high=0.8)
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"]),
             helper.make_node("GridSample", ["x", "grid"], ["y"], mode="linear")]
    graph = helper.make_graph(
        nodes, "stn", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape),
                       helper.make_tensor_value_info("theta", onnx.TensorProto.FLOAT, theta.shape)],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3, 5, 4])],
        [onnx.numpy_helper.from_array(np.array([2, 3, 5, 4], np.int64), "size")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    check_model(model, {"x": x, "theta": theta}, target, tmp_path, rtol=1e-4, atol=1e-5)


# --- RoiAlign ------------------------------------------------------------------------------------

ROIS = np.array([[0, 0, 9, 9], [0, 5, 4, 9], [5.5, 5.2, 9.3, 8.1], [-2, -1.5, 3, 2.5], [8, 8, 12, 13],
                 [2.2, 3.1, 2.4, 3.3]], np.float32)


@pytest.mark.parametrize("coord", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [2, 0])
def test_roi_align(coord, mode, ratio, target, tmp_path):
    x = rand(2, 3, 10, 11, seed=12)
    indices = np.array([0, 1, 1, 0, 1, 0], np.int64)
    attrs = {"coordinate_transformation_mode": coord, "mode": mode, "output_height": 3, "output_width": 4,
             "sampling_ratio": ratio, "spatial_scale": 0.9}
    feeds = {"x": x, "rois": ROIS, "batch_indices": indices}
    model = node_model("RoiAlign", feeds, ["y"], attrs, opset=16)
    check_model(model, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_roi_align_opset10(target, tmp_path):
    x = rand(1, 2, 8, 8, seed=13)
    feeds = {"x": x, "rois": ROIS[:3] * 0.8, "batch_indices": np.zeros(3, np.int64)}
    model = node_model("RoiAlign", feeds, ["y"], {"output_height": 2, "output_width": 2}, opset=10)
    check_model(model, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_roi_align_bad_batch_index_gives_zeros(target, tmp_path):
    x = rand(1, 2, 8, 8, seed=14)
    feeds = {"x": x, "rois": ROIS[:2], "batch_indices": np.array([0, 3], np.int64)}
    model = node_model("RoiAlign", feeds, ["y"], {"output_height": 2, "output_width": 2}, opset=16)
    got, _ = build_and_run(model, feeds, target, tmp_path)
    assert np.all(got["y"][1] == 0) and np.any(got["y"][0] != 0)


# --- DeformConv ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["plain", "mask_bias", "groups", "strided_padded_dilated"])
def test_deform_conv(case, target, tmp_path):
    attrs = {"plain": {}, "mask_bias": {}, "groups": {"group": 2, "offset_group": 2},
             "strided_padded_dilated": {"strides": [2, 1], "pads": [1, 2, 0, 1], "dilations": [1, 2]}}[case]
    ic, oc = (4, 6) if case == "groups" else (3, 2)
    x = rand(2, ic, 7, 8, seed=15)
    w = rand(oc, ic // attrs.get("group", 1), 3, 3, seed=16)
    sh, sw = attrs.get("strides", [1, 1])
    pads = attrs.get("pads", [0, 0, 0, 0])
    dh, dw = attrs.get("dilations", [1, 1])
    oh = (7 + pads[0] + pads[2] - 2 * dh - 1) // sh + 1
    ow = (8 + pads[1] + pads[3] - 2 * dw - 1) // sw + 1
    offset_group = attrs.get("offset_group", 1)
    feeds = {"x": x, "w": w, "offset": rand(2, offset_group * 9 * 2, oh, ow, seed=17) * 2}
    order = ["x", "w", "offset"]
    if case == "mask_bias":
        feeds["b"] = rand(oc, seed=18)
        feeds["mask"] = rand(2, 9, oh, ow, seed=19, low=0, high=1)
        order += ["b", "mask"]
    model = node_model("DeformConv", feeds, ["y"], {**attrs, "_order": order}, opset=19)
    check_model(model, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_deform_conv_3d_is_unsupported(tmp_path):
    x = rand(1, 1, 3, 3, 3)
    feeds = {"x": x, "w": rand(1, 1, 2, 2, 2), "offset": rand(1, 24, 2, 2, 2)}
    model = node_model("DeformConv", feeds, {"y": (np.float32, (1, 1, 2, 2, 2))}, opset=19)
    with pytest.raises(MlccError, match="spatial dims"):
        build_and_run(model, feeds, "host", tmp_path)
