"""Golden tests of LpPool, GlobalLpPool and LpNormalization against onnxruntime, on every target."""

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from tests.golden import check_model, node_model, rand


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [3]},
    {"kernel_shape": [2, 2], "p": 1},
    {"kernel_shape": [3, 2], "strides": [2, 1], "p": 3},
    {"kernel_shape": [3, 3], "pads": [1, 0, 2, 1]},
    {"kernel_shape": [2, 3], "auto_pad": "SAME_UPPER", "strides": [2, 2]},
    {"kernel_shape": [3, 2], "auto_pad": "SAME_LOWER"},
    {"kernel_shape": [2, 2], "dilations": [2, 3]},
    {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2, 2], "strides": [1, 2, 1]},
])
def test_lp_pool(attrs, target, tmp_path):
    spatial = {1: (11,), 2: (7, 8), 3: (4, 5, 6)}[len(attrs["kernel_shape"])]
    x = rand(2, 3, *spatial, seed=1)
    check_model(node_model("LpPool", {"x": x}, ["y"], attrs, opset=18), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [2, 11])
def test_lp_pool_older_opsets(opset, target, tmp_path):
    x = rand(1, 2, 6, 6, seed=2)
    model = node_model("LpPool", {"x": x}, ["y"], {"kernel_shape": [2, 2], "strides": [2, 2], "p": 2}, opset=opset)
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


def test_lp_pool_float64(target, tmp_path):
    # onnxruntime has no float64 LpPool: compared with onnx's reference (equal to LpPool without padding)
    x = rand(1, 2, 5, 6, seed=3, dtype=np.float64)
    model = node_model("LpPool", {"x": x}, ["y"], {"kernel_shape": [2, 3], "p": 3}, opset=18)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-12, atol=1e-12, expected={"y": expected})


@pytest.mark.parametrize("shape,p", [((2, 3, 5, 4), 2), ((2, 3, 7), 1), ((1, 2, 3, 4, 2), 3)])
def test_global_lp_pool(shape, p, target, tmp_path):
    x = rand(*shape, seed=4)
    check_model(node_model("GlobalLpPool", {"x": x}, ["y"], {"p": p}, opset=2), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization(axis, p, target, tmp_path):
    x = rand(3, 4, 5, seed=5)
    x[1, :, 2] = 0  # a zero vector along axis 1
    x[2, 3, :] = 0  # and along axis -1
    check_model(node_model("LpNormalization", {"x": x}, ["y"], {"axis": axis, "p": p}, opset=11), {"x": x}, target,
                tmp_path, rtol=1e-5, atol=1e-6)


def test_lp_normalization_float64(target, tmp_path):
    x = rand(4, 6, seed=6, dtype=np.float64)
    check_model(node_model("LpNormalization", {"x": x}, ["y"], {}, opset=11), {"x": x}, target, tmp_path,
                rtol=1e-12, atol=1e-12)
