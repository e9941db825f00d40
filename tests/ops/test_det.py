"""Golden tests of Det against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand


@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (5, 5), (4, 3, 3), (2, 3, 6, 6)])
def test_det(shape, target, tmp_path):
    x = rand(*shape, seed=1)
    check_model(node_model("Det", {"x": x}, ["y"], opset=11), {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_det_singular_and_pivoting(target, tmp_path):
    x = np.array([[[1, 2, 3], [2, 4, 6], [0, 1, 1]],  # two proportional rows
                  [[0, 1, 0], [1, 0, 0], [0, 0, 1]],  # a zero first pivot: needs a row swap
                  [[0, 0, 0], [1, 2, 3], [4, 5, 6]]], np.float32)
    check_model(node_model("Det", {"x": x}, ["y"], opset=22), {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)


def test_det_float64(target, tmp_path):
    # onnxruntime's Det is float32 only: compared with numpy
    x = rand(3, 4, 4, seed=2, dtype=np.float64)
    check_model(node_model("Det", {"x": x}, ["y"], opset=11), {"x": x}, target, tmp_path, rtol=1e-12, atol=1e-12,
                expected={"y": np.linalg.det(x)})
