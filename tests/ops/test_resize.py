"""Golden tests of Resize (opsets 10-19) and Upsample (7, 9) against onnxruntime, on every target."""

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from mlcc.errors import MlccError, NeedsConstantError
from tests.golden import build_and_run, check_model, node_model, rand

EMPTY = np.zeros((0,), np.float32)


def resize_model(x, attrs, opset=13, scales=None, sizes=None, axes=None):
    """scales or sizes as constants; roi/scales left empty as each opset allows."""
    attrs = dict(attrs)
    if axes is not None:
        attrs["axes"] = axes
    inits = {}
    if opset == 10:
        inits["scales"] = np.array(scales, np.float32)
    else:
        inits["roi"] = EMPTY
        inits["scales"] = EMPTY if scales is None else np.array(scales, np.float32)
        if sizes is not None:
            inits["sizes"] = np.array(sizes, np.int64)
    model = node_model("Resize", {"x": x}, ["y"], attrs, opset=opset, initializers=inits)
    if opset == 10:  # onnx infers Resize-10's output dims in double (10 * 0.7f -> 6); onnxruntime and mlcc in float (7)
        for axis, dim in enumerate(model.graph.output[0].type.tensor_type.shape.dim):
            dim.dim_param = f"d{axis}"
    return model




@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"])
@pytest.mark.parametrize("scales", [[1, 1, 3, 0.6]], ids=["mixed"])
def test_resize_nearest(coord, nearest_mode, scales, target, tmp_path):
    # x3 puts source coordinates exactly half way between pixels, where the rounding modes differ
    x = rand(1, 2, 6, 10, seed=1)
    attrs = {"mode": "nearest", "coordinate_transformation_mode": coord, "nearest_mode": nearest_mode}
    check_model(resize_model(x, attrs, scales=scales), {"x": x}, target, tmp_path, rtol=0, atol=0)


# Every coordinate transformation and nearest mode each Resize version defines, one node per combination in one
# model per version. Scales x3 and x0.5 put source coordinates exactly half way between pixels, where rounding modes
# differ (not a float32 ulp off it: there onnxruntime's rounding departs from the formulas).
_NEAREST = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
_COORDS = {11: ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                "tf_crop_and_resize"]}
_COORDS[13] = _COORDS[18] = _COORDS[11]  # tf_half_pixel_for_nn left the spec at 13; tf2onnx models still carry it
_COORDS[19] = _COORDS[11] + ["half_pixel_symmetric"]


def _every_mode_model(x, opset):
    inits = {"scales": np.array([1, 1, 3, 0.5], np.float32)}
    if opset == 10:
        nodes = [onnx.helper.make_node("Resize", ["x", "scales"], [f"y_{mode}"], mode=mode) for mode in ("nearest", "linear")]
    else:
        inits.update(roi_none=EMPTY, roi=np.array([0, 0, 0.2, 0.1, 1, 1, 0.9, 0.8], np.float32))
        nodes = []
        for coord in _COORDS[opset]:
            roi = "roi" if coord == "tf_crop_and_resize" else "roi_none"
            forms = [("nearest", n) for n in _NEAREST] + [("linear", None), ("cubic", None)]
            for mode, nearest in forms:
                attrs = {"mode": mode, "coordinate_transformation_mode": coord}
                if nearest:
                    attrs["nearest_mode"] = nearest
                out = f"y_{coord}_{mode}{'_' + nearest if nearest else ''}"
                nodes.append(onnx.helper.make_node("Resize", ["x", roi, "scales"], [out], **attrs))
    graph = onnx.helper.make_graph(
        nodes, "every_mode", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        [onnx.helper.make_tensor_value_info(n.output[0], onnx.TensorProto.UNDEFINED, None) for n in nodes],
        [onnx.numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model)


@pytest.mark.parametrize("opset", [10, 11, 13, 18, 19])
def test_resize_every_mode_of_every_version(opset, target, tmp_path):
    x = rand(1, 2, 6, 10, seed=1)
    check_model(_every_mode_model(x, opset), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
@pytest.mark.parametrize("scales", [[1, 1, 1.5, 2.5], [1, 1, 0.5, 0.6]], ids=["x1.5_2.5", "down"])
def test_resize_bilinear(coord, scales, target, tmp_path):
    x = rand(2, 3, 6, 10, seed=2)
    attrs = {"mode": "linear", "coordinate_transformation_mode": coord}
    check_model(resize_model(x, attrs, scales=scales), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("sizes", [[1, 2, 9, 4], [1, 2, 1, 13], [1, 2, 6, 10]])
def test_resize_sizes(mode, sizes, target, tmp_path):
    x = rand(1, 2, 6, 10, seed=3)
    attrs = {"mode": mode, "coordinate_transformation_mode": "half_pixel"}
    check_model(resize_model(x, attrs, sizes=sizes), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_nhwc_inner_channels(mode, target, tmp_path):
    x = rand(1, 5, 6, 3, seed=4)
    attrs = {"mode": mode, "coordinate_transformation_mode": "align_corners"}
    check_model(resize_model(x, attrs, scales=[1, 2, 1.5, 1]), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,scales", [((2, 3, 7), [1, 1, 2.5]), ((1, 2, 3, 4, 5), [1, 1, 2, 1.5, 0.5])],
                         ids=["1d", "3d"])
def test_resize_linear_other_ranks(shape, scales, target, tmp_path):
    x = rand(*shape, seed=5)
    attrs = {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}
    check_model(resize_model(x, attrs, scales=scales), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("given", ["scales", "sizes"])
@pytest.mark.parametrize("opset", [18, 19])
def test_resize_axes(mode, given, opset, target, tmp_path):
    x = rand(1, 2, 6, 10, seed=6)
    attrs = {"mode": mode}
    extra = {"scales": [0.5, 1.5]} if given == "scales" else {"sizes": [4, 13]}
    check_model(resize_model(x, attrs, opset=opset, axes=[-2, 3], **extra), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 2], [1, 1, 1.5, 0.7]])
def test_resize_half_pixel_symmetric(mode, scales, target, tmp_path):
    x = rand(1, 2, 6, 10, seed=7)
    attrs = {"mode": mode, "coordinate_transformation_mode": "half_pixel_symmetric"}
    check_model(resize_model(x, attrs, opset=19, scales=scales), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 3], [1, 1, 0.5, 0.7]])
def test_resize_opset10(mode, scales, target, tmp_path):
    x = rand(1, 2, 6, 10, seed=8)
    check_model(resize_model(x, {"mode": mode}, opset=10, scales=scales), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


def test_resize_opset11_sizes_with_empty_scales(target, tmp_path):
    x = rand(1, 1, 4, 4, seed=9)
    model = resize_model(x, {"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, opset=11, sizes=[1, 1, 7, 3])
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


def test_resize_nearest_int32(target, tmp_path):
    x = np.arange(2 * 3 * 4, dtype=np.int32).reshape(1, 2, 3, 4)
    check_model(resize_model(x, {"mode": "nearest"}, scales=[1, 1, 2, 1.5]), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("opset", [7, 9])
def test_upsample(mode, opset, target, tmp_path):
    x = rand(1, 2, 3, 4, seed=10)
    scales = np.array([1, 1, 2, 3], np.float32)
    if opset == 7:
        model = node_model("Upsample", {"x": x}, ["y"], {"mode": mode, "scales": scales.tolist()}, opset=7)
    else:
        model = node_model("Upsample", {"x": x}, ["y"], {"mode": mode}, opset=9, initializers={"scales": scales})
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("coord", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
@pytest.mark.parametrize("scales", [[1, 1, 2, 1.5], [1, 1, 0.5, 0.8]], ids=["up", "down"])
def test_resize_cubic(coord, scales, target, tmp_path):
    x = rand(1, 2, 6, 10, seed=11)
    attrs = {"mode": "cubic", "coordinate_transformation_mode": coord}
    check_model(resize_model(x, attrs, scales=scales), {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("a,exclude", [(-0.5, 1), (-0.75, 1), (-0.5, 0)])
def test_resize_cubic_coeff_exclude_outside(a, exclude, target, tmp_path):
    x = rand(1, 1, 5, 7, seed=12)
    attrs = {"mode": "cubic", "cubic_coeff_a": a, "exclude_outside": exclude}
    check_model(resize_model(x, attrs, scales=[1, 1, 1.6, 0.6]), {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("sizes", [[1, 2, 5, 4], [1, 2, 3, 2], [1, 2, 12, 3]], ids=["mild", "strong", "mixed"])
def test_resize_antialias(mode, sizes, target, tmp_path):
    # strong shrinking widens the windows past the unrolled-expression limit: the tap loops run
    x = rand(1, 2, 8, 9, seed=13)
    attrs = {"mode": mode, "antialias": 1}
    check_model(resize_model(x, attrs, opset=18, sizes=sizes), {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("roi,extrapolation", [([0, 0, 0.2, 0.3, 1, 1, 0.7, 0.9], 0.0),
                                               ([0, 0, -0.2, 0.5, 1, 1, 1.1, 1.4], 3.5)], ids=["inside", "beyond"])
def test_resize_tf_crop_and_resize(mode, roi, extrapolation, target, tmp_path):
    x = rand(1, 2, 6, 8, seed=14)
    attrs = {"mode": mode, "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": extrapolation}
    model = resize_model(x, attrs, sizes=[1, 2, 5, 7])
    model.graph.initializer[0].CopyFrom(onnx.numpy_helper.from_array(np.array(roi, np.float32), "roi"))
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_resize_keep_aspect_ratio(policy, mode, target, tmp_path):
    x = rand(1, 2, 6, 8, seed=15)
    attrs = {"mode": mode, "keep_aspect_ratio_policy": policy}
    check_model(resize_model(x, attrs, opset=18, sizes=[9, 10], axes=[2, 3]), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_resize_double(mode, target, tmp_path):
    # onnxruntime has no double Resize: onnx's reference is the oracle; the tap weights are float32
    x = rand(1, 2, 5, 6, seed=16, dtype=np.float64)
    model = resize_model(x, {"mode": mode}, scales=[1, 1, 1.6, 2])
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5, expected={"y": expected})


@pytest.mark.parametrize("x,attrs,message", [
    (rand(1, 1, 4, 4), {"mode": "area"}, "area"),
    (np.ones((1, 1, 4, 4), np.int32), {"mode": "linear"}, "int32"),
    (rand(1, 1, 4, 4), {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize"}, "roi"),
])
def test_resize_unsupported(x, attrs, message, tmp_path):
    model = resize_model(x, attrs, opset=18, sizes=[1, 1, 8, 8])
    with pytest.raises(MlccError, match=message):
        build_and_run(model, {"x": x}, "host", tmp_path)


def test_resize_scales_at_run_time_is_unsupported(tmp_path):
    x = rand(1, 1, 4, 4)
    scales = np.array([1, 1, 2, 2], np.float32)
    model = node_model("Resize", {"x": x, "scales": scales}, {"y": (np.float32, (1, 1, 8, 8))}, {"_order": ["x", "", "scales"]},
                       opset=13)
    with pytest.raises(NeedsConstantError, match="run time"):
        build_and_run(model, {"x": x, "scales": scales}, "host", tmp_path)
