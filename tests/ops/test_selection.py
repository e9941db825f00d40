"""Golden tests of TopK and Hardmax against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand


def top_k_model(x, k, opset, **attrs):
    if opset < 10:
        return node_model("TopK", {"x": x}, ["values", "indices"], {"k": k, **attrs}, opset=opset)
    return node_model("TopK", {"x": x}, ["values", "indices"], attrs, opset=opset,
                      initializers={"k": np.array([k], np.int64)})


@pytest.mark.parametrize("axis,k", [(-1, 3), (0, 2), (1, 5), (2, 1), (-1, 6)])
@pytest.mark.parametrize("largest", [1, 0])
def test_top_k(axis, k, largest, target, tmp_path):
    # few distinct values so that ties (kept in input order) are common
    x = np.random.default_rng(1).integers(0, 5, (3, 5, 6)).astype(np.float32)
    check_model(top_k_model(x, k, 11, axis=axis, largest=largest), {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("opset", [1, 10, 11, 24])
def test_top_k_opsets(opset, target, tmp_path):
    x = rand(4, 20, seed=2)
    check_model(top_k_model(x, 7, opset), {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint8])
def test_top_k_types(dtype, target, tmp_path):
    x = np.random.default_rng(3).integers(0, 50, (3, 40)).astype(dtype)
    check_model(top_k_model(x, 10, 11, largest=0), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_top_k_long_lane(target, tmp_path):
    x = rand(2, 1000, seed=4)
    check_model(top_k_model(x, 100, 11), {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("axis,opset", [(None, 11), (0, 11), (2, 11), (None, 13), (0, 13), (1, 13), (-1, 13)])
def test_hardmax(axis, opset, target, tmp_path):
    x = np.random.default_rng(5).integers(0, 4, (3, 4, 5)).astype(np.float32)
    attrs = {} if axis is None else {"axis": axis}
    check_model(node_model("Hardmax", {"x": x}, ["y"], attrs, opset=opset), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_hardmax_float64(target, tmp_path):
    # onnxruntime has no float64 Hardmax: compared with numpy
    x = rand(4, 7, seed=6, dtype=np.float64)
    expected = (np.arange(4)[:, None] == np.argmax(x, axis=0)[None, :]).astype(np.float64)
    check_model(node_model("Hardmax", {"x": x}, ["y"], {"axis": 0}, opset=13), {"x": x}, target, tmp_path, rtol=0, atol=0,
                expected={"y": expected})
