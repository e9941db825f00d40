"""Golden tests of the Reduce family and ArgMax/ArgMin against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"]
MORE = ["ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"]


def reduce_model(op, x, axes, opset, **attrs):
    """axes as the attribute before the opset that made it an input, else as a constant input."""
    since = 13 if op == "ReduceSum" else 18
    if axes is None or opset < since:
        if axes is not None:
            attrs["axes"] = axes
        return node_model(op, {"x": x}, ["y"], attrs, opset=opset)
    return node_model(op, {"x": x}, ["y"], attrs, opset=opset, initializers={"axes": np.array(axes, np.int64)})


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("axes,keepdims,opset", [
    ([1], 1, 11), ([-1], 0, 18), ([0, 2], 1, 18), ([1, 3], 0, 11), ([2, 3], 1, 13), (None, 1, 18), (None, 0, 11),
    ([0, 1, 2, 3], 0, 18),
])
def test_reduce_axes(op, axes, keepdims, opset, target, tmp_path):
    x = rand(2, 3, 4, 5, seed=3)
    check_model(reduce_model(op, x, axes, opset, keepdims=keepdims), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


def more_input(op, *shape, seed, dtype=np.float32):
    """LogSum needs positive sums; Prod stays near 1 so that long products neither vanish nor blow up."""
    if op == "ReduceLogSum":
        return rand(*shape, seed=seed, low=0.1, high=2.0, dtype=dtype)
    if op == "ReduceProd":
        return rand(*shape, seed=seed, low=0.5, high=1.5, dtype=dtype)
    return rand(*shape, seed=seed, dtype=dtype)


@pytest.mark.parametrize("op", MORE)
@pytest.mark.parametrize("axes,keepdims,opset", [([1], 1, 18), ([0, 2], 0, 13), ([-1], 0, 18), (None, 1, 11)])
def test_reduce_more(op, axes, keepdims, opset, target, tmp_path):
    x = more_input(op, 2, 3, 4, 5, seed=12)
    check_model(reduce_model(op, x, axes, opset, keepdims=keepdims), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", MORE)
def test_reduce_more_noop_with_empty_axes(op, target, tmp_path):
    # no axes with noop_with_empty_axes: every element is its own reduction (|x|, x*x, log x, ...)
    x = more_input(op, 3, 4, seed=13)
    model = node_model(op, {"x": x}, ["y"], {"noop_with_empty_axes": 1}, opset=18)
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("axes", [[1], [0, 2], [2]])
def test_reduce_log_sum_exp_large_values(axes, target, tmp_path):
    # exp(100) overflows float32: the peak must be subtracted first; rows of -inf give -inf, an inf gives inf
    x = rand(3, 4, 5, seed=14) * 30 + 100
    x[0, :, 0] = -np.inf
    x[1, 2, 3] = np.inf
    check_model(reduce_model("ReduceLogSumExp", x, axes, 18, keepdims=0), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["ReduceL2", "ReduceSumSquare", "ReduceLogSumExp"])
@pytest.mark.parametrize("shape,axes", [((3, 1000), [1]), ((1000, 3), [0])])
def test_reduce_more_long(op, shape, axes, target, tmp_path):
    x = rand(*shape, seed=15)
    check_model(reduce_model(op, x, axes, 18, keepdims=0), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["ReduceMean", *MORE])
def test_reduce_float64(op, target, tmp_path):
    x = more_input(op, 3, 4, 5, seed=16, dtype=np.float64)
    check_model(reduce_model(op, x, [1, 2], 18, keepdims=0), {"x": x}, target, tmp_path, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op,dtype", [("ReduceProd", np.int64), ("ReduceL1", np.int32), ("ReduceL2", np.int64),
                                      ("ReduceSumSquare", np.int32), ("ReduceLogSum", np.int32)])
def test_reduce_more_ints(op, dtype, target, tmp_path):
    low = 1 if op == "ReduceLogSum" else -4
    x = np.random.default_rng(17).integers(low, 5, (3, 4, 5)).astype(dtype)
    check_model(reduce_model(op, x, [0, 2], 18, keepdims=1), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("axes", [[1], None])
def test_reduce_bool(op, axes, target, tmp_path):
    x = np.random.default_rng(18).integers(0, 2, (4, 3)).astype(bool)
    x[0], x[1] = True, False
    check_model(reduce_model(op, x, axes, 20, keepdims=0), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax"])
def test_reduce_size_one_axes(op, target, tmp_path):
    x = rand(3, 1, 4, 1, seed=4)
    check_model(reduce_model(op, x, [1, 3], 13, keepdims=1), {"x": x}, target, tmp_path, rtol=1e-6, atol=0)


@pytest.mark.parametrize("op,opset", [("ReduceSum", 13), ("ReduceMean", 18), ("ReduceMax", 18)])
def test_reduce_noop_with_empty_axes(op, opset, target, tmp_path):
    x = rand(2, 3, seed=5)
    model = node_model(op, {"x": x}, ["y"], {"noop_with_empty_axes": 1}, opset=opset)
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
def test_reduce_empty_axes_reduces_all(op, target, tmp_path):
    x = rand(4, 6, seed=6)
    model = node_model(op, {"x": x}, ["y"], {"keepdims": 0}, opset=18,
                       initializers={"axes": np.zeros((0,), np.int64)})
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean"])
@pytest.mark.parametrize("shape,axes", [((200_000,), [0]), ((3, 70_000), [1]), ((70_000, 3), [0]),
                                        ((300, 50, 7), [0, 1])])
def test_reduce_long_sums(op, shape, axes, target, tmp_path):
    # all-positive terms make the rounding error of a plain running float sum grow with the count; compared
    # with the exact sum, as onnxruntime's own error down columns (~4e-6 here) is above this tolerance
    x = rand(*shape, seed=7, low=0.0, high=1.0)
    exact = x.astype(np.float64).sum(axis=tuple(axes))
    if op == "ReduceMean":
        exact /= x.size // exact.size
    check_model(reduce_model(op, x, axes, 13, keepdims=0), {"x": x}, target, tmp_path, rtol=1e-6, atol=0,
                expected={"y": exact.astype(np.float32)})


def test_reduce_sum_infinities(target, tmp_path):
    x = rand(3, 600, seed=8)
    x[0, 10], x[1, 500], x[2, 3], x[2, 400] = np.inf, -np.inf, np.inf, -np.inf
    check_model(reduce_model("ReduceSum", x, [1], 13), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("axes", [[1], [0, 2]])
def test_reduce_int64(op, axes, target, tmp_path):
    x = np.random.default_rng(9).integers(-50, 50, (3, 4, 5)).astype(np.int64)
    check_model(reduce_model(op, x, axes, 18, keepdims=0), {"x": x}, target, tmp_path)


def test_reduce_axes_at_run_time_is_unsupported(tmp_path):
    from mlcc.errors import NeedsConstantError
    from tests.golden import build_and_run

    x = rand(2, 3)
    model = node_model("ReduceSum", {"x": x, "axes": np.array([1], np.int64)}, {"y": (np.float32, (2, 1))}, opset=13)
    with pytest.raises(NeedsConstantError, match="axes"):
        build_and_run(model, {"x": x, "axes": np.array([1], np.int64)}, "host", tmp_path)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("axis,keepdims", [(0, 1), (1, 1), (2, 0), (-1, 0)])
@pytest.mark.parametrize("select_last_index", [0, 1])
def test_arg_extreme(op, axis, keepdims, select_last_index, target, tmp_path):
    # few distinct values so that ties are common
    x = np.random.default_rng(10).integers(0, 4, (3, 5, 6)).astype(np.float32)
    attrs = {"axis": axis, "keepdims": keepdims, "select_last_index": select_last_index}
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=13), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op,dtype", [("ArgMax", np.int64), ("ArgMin", np.int32), ("ArgMin", np.float64)])
def test_arg_extreme_types_opset11(op, dtype, target, tmp_path):
    x = np.random.default_rng(11).integers(-100, 100, (4, 9)).astype(dtype)
    check_model(node_model(op, {"x": x}, ["y"], {"axis": 1}, opset=11), {"x": x}, target, tmp_path)
