"""Golden tests of CumSum and CumProd against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand


def scan_model(op, x, axis, opset, **attrs):
    return node_model(op, {"x": x}, ["y"], attrs, opset=opset, initializers={"axis": np.array(axis, np.int64)})


@pytest.mark.parametrize("op,opset", [("CumSum", 11), ("CumSum", 14), ("CumProd", 26)])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive,reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_scan(op, opset, axis, exclusive, reverse, target, tmp_path):
    x = rand(3, 4, 5, seed=1, low=0.5, high=1.5)
    check_model(scan_model(op, x, axis, opset, exclusive=exclusive, reverse=reverse), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,opset", [("CumSum", 14), ("CumProd", 26)])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_scan_types(op, opset, dtype, target, tmp_path):
    x = np.random.default_rng(2).integers(-3, 4, (2, 7)).astype(dtype)
    check_model(scan_model(op, x, 1, opset, reverse=1), {"x": x}, target, tmp_path, rtol=1e-12, atol=0)


def test_cumsum_1d_int32_axis(target, tmp_path):
    x = rand(9, seed=3)
    model = node_model("CumSum", {"x": x}, ["y"], {"exclusive": 1}, opset=14,
                       initializers={"axis": np.array([0], np.int32)})
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)


def test_cumsum_axis_at_run_time_needs_constant(tmp_path):
    from mlcc.errors import NeedsConstantError
    from tests.golden import build_and_run

    x = rand(2, 3)
    feeds = {"x": x, "axis": np.array(1, np.int64)}
    model = node_model("CumSum", feeds, {"y": (np.float32, (2, 3))}, opset=14)
    with pytest.raises(NeedsConstantError, match="axis"):
        build_and_run(model, feeds, "host", tmp_path)
