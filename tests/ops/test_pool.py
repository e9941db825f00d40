"""Golden tests of MaxPool, AveragePool, LpPool, GlobalMaxPool and GlobalAveragePool against onnxruntime."""

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-5, atol=1e-6)

WINDOWS_2D = {
    "3x3": {"kernel_shape": [3, 3]},
    "3x3_s2_p1": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    "2x2_s2": {"kernel_shape": [2, 2], "strides": [2, 2]},
    "asym_pads": {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [0, 1, 2, 0]},
    "googlenet": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 0, 1, 1]},
    "same_upper": {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
    "same_lower": {"kernel_shape": [2, 3], "strides": [2, 2], "auto_pad": "SAME_LOWER"},
    "valid": {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID"},
    "ceil": {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    "ceil_pads": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1},
}


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("window", list(WINDOWS_2D))
def test_pool_2d(op, window, target, tmp_path):
    attrs = WINDOWS_2D[window]
    x = rand(2, 3, 10, 9)
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=17), {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("opset", [10, 11, 19, 22])
def test_pool_ceil_mode_opsets(op, opset, target, tmp_path):
    # along w the last ceil-mode window would start in the end padding: it is dropped
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1}
    x = rand(1, 2, 10, 9, seed=8)
    model = node_model(op, {"x": x}, ["y"], attrs, opset=opset)
    for axis, dim in enumerate(model.graph.output[0].type.tensor_type.shape.dim):  # onnx's inference keeps that
        dim.dim_param = f"d{axis}"                                                 # window (6 wide, not 5)
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("op,opset,shape,attrs", [
    # the opset-7/9 forms of the onnx model zoo (AlexNet, GoogLeNet, Inception v2, ResNet, ShuffleNet)
    ("MaxPool", 9, (1, 8, 12, 12), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 0, 1, 1]}),
    ("MaxPool", 9, (1, 8, 27, 27), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ("MaxPool", 9, (1, 16, 56, 56), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("MaxPool", 7, (1, 4, 14, 14), {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ("AveragePool", 9, (1, 8, 6, 6), {"kernel_shape": [7, 7], "strides": [1, 1], "pads": [0, 0, 1, 1]}),
    ("AveragePool", 9, (1, 8, 28, 28), {"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1]}),
    ("AveragePool", 9, (1, 8, 56, 56), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("AveragePool", 9, (1, 8, 7, 7), {"kernel_shape": [7, 7], "strides": [1, 1]}),
    ("AveragePool", 7, (1, 4, 14, 14), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    ("AveragePool", 9, (1, 4, 14, 14), {"kernel_shape": [5, 5], "strides": [3, 3]}),
])
def test_pool_zoo_forms(op, opset, shape, attrs, target, tmp_path):
    x = rand(*shape, seed=3)
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=opset), {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 0], "count_include_pad": 1, "ceil_mode": 1},
    {"kernel_shape": [2, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER", "count_include_pad": 1},
])
def test_average_pool_count_include_pad(attrs, target, tmp_path):
    x = rand(1, 2, 7, 8, seed=4)
    check_model(node_model("AveragePool", {"x": x}, ["y"], attrs), {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("op,opset", [("MaxPool", 12), ("AveragePool", 19)])
@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3, 3], "dilations": [2, 2]},
    {"kernel_shape": [2, 3], "strides": [2, 1], "dilations": [2, 1], "pads": [1, 1, 1, 2]},
])
def test_pool_dilations(op, opset, attrs, target, tmp_path):
    x = rand(1, 3, 11, 10, seed=5)
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=opset), {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("shape,attrs", [
    ((2, 3, 17), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ((1, 4, 12), {"kernel_shape": [4], "strides": [4]}),
    ((1, 2, 5, 6, 7), {"kernel_shape": [2, 3, 3], "strides": [1, 2, 2], "pads": [0, 1, 1, 1, 1, 0]}),
    ((1, 2, 4, 4, 4), {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
])
def test_pool_1d_3d(op, shape, attrs, target, tmp_path):
    x = rand(*shape, seed=6)
    check_model(node_model(op, {"x": x}, ["y"], attrs), {"x": x}, target, tmp_path, **TOL)


def test_max_pool_unused_indices_ok(target, tmp_path):
    x = rand(1, 2, 6, 6)
    model = node_model("MaxPool", {"x": x}, ["y", "indices"], {"kernel_shape": [2, 2], "strides": [2, 2]})
    del model.graph.output[1]  # Indices named but read by nobody
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("shape,attrs", [
    ((2, 3, 7, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((1, 2, 9), {"kernel_shape": [3], "strides": [2]}),
    ((1, 2, 4, 5, 6), {"kernel_shape": [2, 2, 3], "strides": [2, 1, 2], "pads": [0, 1, 0, 1, 0, 1]}),
], ids=["2d", "1d", "3d"])
def test_max_pool_indices(storage_order, shape, attrs, target, tmp_path):
    x = rand(*shape, seed=9)
    model = node_model("MaxPool", {"x": x}, ["y", "indices"], {**attrs, "storage_order": storage_order}, opset=12)
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float64])
def test_max_pool_other_dtypes(dtype, target, tmp_path):
    x = (rand(1, 3, 9, 8, seed=10) * 50).astype(dtype)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}
    check_model(node_model("MaxPool", {"x": x}, ["y"], attrs, opset=12), {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("include_pad", [0, 1])
def test_average_pool_double(include_pad, target, tmp_path):
    x = rand(1, 3, 9, 8, seed=11, dtype=np.float64)
    attrs = {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": include_pad,
             "ceil_mode": 1}
    model = node_model("AveragePool", {"x": x}, ["y"], attrs)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]  # onnxruntime has no double AveragePool
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-12, atol=1e-12, expected={"y": expected})


@pytest.mark.parametrize("p,shape,attrs", [
    (1, (1, 3, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    (2, (1, 3, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    (3, (1, 3, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    (3, (1, 3, 9, 8), {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER"}),
    (2, (2, 2, 11), {"kernel_shape": [3], "strides": [2], "dilations": [2]}),
    (4, (1, 2, 4, 5, 6), {"kernel_shape": [2, 2, 2]}),
], ids=["2d_p1", "2d_p2", "2d_p3", "same", "1d_dilated", "3d"])
def test_lp_pool(p, shape, attrs, target, tmp_path):
    x = rand(*shape, seed=12)
    check_model(node_model("LpPool", {"x": x}, ["y"], {**attrs, "p": p}, opset=18), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["GlobalMaxPool", "GlobalAveragePool"])
@pytest.mark.parametrize("shape", [(2, 3, 7, 7), (1, 5, 13), (1, 2, 3, 4, 5), (2, 8, 1, 1)])
def test_global_pool(op, shape, target, tmp_path):
    x = rand(*shape, seed=7)
    check_model(node_model(op, {"x": x}, ["y"], opset=9), {"x": x}, target, tmp_path, **TOL)
