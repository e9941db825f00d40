"""Golden tests of the elementwise table against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Floor", "Ceil", "Erf", "Softplus", "HardSwish", "Reciprocal"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op, target, tmp_path):
    x = rand(2, 3, 5)
    if op == "Reciprocal":
        x = np.where(np.abs(x) < 0.1, 0.5, x).astype(np.float32)
    check_model(node_model(op, {"x": x}, ["y"]), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["Sqrt", "Log"])
def test_unary_positive(op, target, tmp_path):
    x = rand(4, 7, low=0.1, high=5.0)
    check_model(node_model(op, {"x": x}, ["y"]), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op,attrs", [
    ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
])
def test_unary_with_attributes(op, attrs, target, tmp_path):
    x = rand(3, 8)
    opset = 20 if op == "Gelu" else 17
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=opset), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (2, 3))])
def test_binary_broadcast(op, shapes, target, tmp_path):
    a, b = rand(*shapes[0], seed=1), rand(*shapes[1], seed=2)
    if op == "Div":
        b = np.where(np.abs(b) < 0.2, 1.0, b).astype(np.float32)
    check_model(node_model(op, {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path)


def test_add_int64(target, tmp_path):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    b = np.array([1, -2, 3, -4], dtype=np.int64)
    check_model(node_model("Add", {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path)


# --- the rest of the table ----------------------------------------------------------------------
def test_pow(target, tmp_path):
    a = rand(3, 4, low=0.1, high=3.0, seed=3)
    b = rand(4, low=-2.0, high=2.0, seed=4)
    check_model(node_model("Pow", {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path, rtol=1e-5, atol=1e-6)


def test_pow_integer_exponent_negative_base(target, tmp_path):
    a = rand(2, 5, seed=5)
    b = np.array([2, 3], np.int64).reshape(2, 1)
    check_model(node_model("Pow", {"a": a, "b": b}, ["y"], opset=15), {"a": a, "b": b}, target, tmp_path, rtol=1e-5, atol=1e-6)


VARIADIC_SHAPES = [[(2, 3, 4)], [(2, 3, 4), (4,)], [(2, 1, 4), (3, 1), (1, 1, 1)]]


@pytest.mark.parametrize("op", ["Min", "Max", "Sum", "Mean"])
@pytest.mark.parametrize("shapes", VARIADIC_SHAPES, ids=["1", "2", "3"])
def test_variadic(op, shapes, target, tmp_path):
    feeds = {f"x{i}": rand(*s, seed=10 + i) for i, s in enumerate(shapes)}
    check_model(node_model(op, feeds, ["y"]), feeds, target, tmp_path, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["Min", "Max"])
def test_variadic_int64(op, target, tmp_path):
    feeds = {"a": np.array([[1, -5, 7], [2, 2, -9]], np.int64), "b": np.array([3, -6, 7], np.int64),
             "c": np.array([[0], [4]], np.int64)}
    check_model(node_model(op, feeds, ["y"]), feeds, target, tmp_path)


@pytest.mark.parametrize("op", ["Min", "Max"])
def test_min_max_nan(op, target, tmp_path):
    # a NaN operand makes the result NaN (as in onnxruntime and numpy), whichever side it is on
    feeds = {"a": np.array([np.nan, 1.0, np.nan, -np.inf, np.inf, 2.0], np.float32),
             "b": np.array([2.0, np.nan, np.nan, 0.0, 1.0, 2.0], np.float32),
             "c": np.array([1.0, 5.0, 0.0, 3.0, 3.0, np.nan], np.float32)}
    check_model(node_model(op, feeds, ["y"]), feeds, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("slope_shape", [(3, 1, 1), (1,), (3, 4, 5)], ids=["channel", "scalar", "full"])
def test_prelu(slope_shape, target, tmp_path):
    x = rand(2, 3, 4, 5, seed=20)
    slope = rand(*slope_shape, seed=21)
    check_model(node_model("PRelu", {"x": x}, ["y"], initializers={"slope": slope}), {"x": x}, target, tmp_path,
                rtol=1e-6, atol=0)


@pytest.mark.parametrize("attrs", [{"min": -0.5, "max": 0.7}, {"min": 0.0}, {"max": 0.3}, {}])
def test_clip_opset6_attributes(attrs, target, tmp_path):
    x = rand(3, 7, seed=22)
    x[0, 0] = np.nan
    check_model(node_model("Clip", {"x": x}, ["y"], attrs, opset=10), {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("bounds", ["both", "min", "max", "none"])
@pytest.mark.parametrize("as_inputs", [False, True], ids=["const", "graph_input"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_clip_opset11_inputs(bounds, as_inputs, dtype, target, tmp_path):
    x = (rand(4, 6, seed=23) * 10).astype(dtype)
    lo, hi = np.array(-3, dtype), np.array(4, dtype)
    given = {"min": lo, "max": hi}
    names = {"both": ["x", "min", "max"], "min": ["x", "min"], "max": ["x", "", "max"], "none": ["x"]}[bounds]
    used = {n: given[n] for n in names if n in given}
    inputs, inits = ({"x": x, **used}, {}) if as_inputs else ({"x": x}, used)
    model = node_model("Clip", inputs, ["y"], {"_order": names}, opset=13, initializers=inits)
    check_model(model, inputs, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("lo,hi", [(-1, 1), (1, -1)], ids=["ordered", "min_above_max"])
def test_clip_nan_inf_and_crossed_bounds(lo, hi, target, tmp_path):
    x = np.array([np.nan, np.inf, -np.inf, 0.5, -2.0, 3.0], np.float32)
    model = node_model("Clip", {"x": x}, ["y"], initializers={"min": np.array(lo, np.float32), "max": np.array(hi, np.float32)})
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_comparison(op, dtype, target, tmp_path):
    a = np.array([[1, 2, 3, -4], [0, 5, 5, -1], [2, 2, 2, 2]], dtype)
    b = np.array([2, 2, 5, -4], dtype)
    if dtype == np.float32:
        a[0, 0], b[1] = np.nan, np.inf
    check_model(node_model(op, {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path)


def test_not(target, tmp_path):
    x = np.array([[True, False, True], [False, False, True]])
    check_model(node_model("Not", {"x": x}, ["y"]), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic(op, target, tmp_path):
    a = np.array([[True, False], [True, True], [False, False]])
    b = np.array([True, False])
    check_model(node_model(op, {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path)


@pytest.mark.parametrize("shapes", [((2, 3), (2, 3), (2, 3)), ((3,), (2, 1), (1, 3)), ((2, 1, 3), (4, 1), ())])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_where(shapes, dtype, target, tmp_path):
    rng = np.random.default_rng(24)
    c = rng.random(shapes[0]) > 0.5
    x = rng.integers(-9, 9, shapes[1]).astype(dtype)
    y = rng.integers(-9, 9, shapes[2]).astype(dtype)
    feeds = {"c": c, "x": x, "y": y}
    check_model(node_model("Where", feeds, ["out"]), feeds, target, tmp_path)


CASTS = [(np.float32, np.int64), (np.int64, np.float32), (np.float32, np.bool_), (np.bool_, np.float32),
         (np.int64, np.int32), (np.int32, np.int64), (np.float32, np.int32), (np.int64, np.bool_),
         (np.bool_, np.int64), (np.float32, np.float64), (np.float64, np.float32), (np.float32, np.uint8)]


@pytest.mark.parametrize("src,dst", CASTS, ids=[f"{np.dtype(a).name}-{np.dtype(b).name}" for a, b in CASTS])
def test_cast(src, dst, target, tmp_path):
    from onnx import helper

    values = np.array([[0.0, 1.0, -1.0, 2.7], [-3.9, 100.0, 0.49, -0.0]])
    if np.dtype(src) == np.bool_:
        x = values != 0
    elif dst == np.uint8:
        x = np.abs(values).astype(src)  # negative floats to unsigned are undefined behaviour in C and ORT
    else:
        x = values.astype(src)
    to = helper.np_dtype_to_tensor_dtype(np.dtype(dst))
    check_model(node_model("Cast", {"x": x}, ["y"], {"to": to}), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_cast_large_int64_to_int32_wraps(target, tmp_path):
    from onnx import TensorProto

    x = np.array([2**31 + 5, -(2**31) - 7, 2**40 + 3], np.int64)
    check_model(node_model("Cast", {"x": x}, ["y"], {"to": TensorProto.INT32}), {"x": x}, target, tmp_path)


def test_cast_to_float16_is_unsupported(tmp_path):
    from onnx import TensorProto

    from mlcc.errors import UnsupportedError
    from tests.golden import build_and_run

    x = rand(3)
    with pytest.raises(UnsupportedError, match="float16"):
        build_and_run(node_model("Cast", {"x": x}, ["y"], {"to": TensorProto.FLOAT16}), {"x": x}, "host", tmp_path)


def test_softplus_large_magnitudes(target, tmp_path):
    x = np.array([-1000.0, -100.0, -30.0, -1.0, 0.0, 1.0, 30.0, 88.0, 100.0, 1000.0, np.inf, -np.inf], np.float32)
    check_model(node_model("Softplus", {"x": x}, ["y"]), {"x": x}, target, tmp_path, rtol=1e-6, atol=0)


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5], np.float32)


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Floor", "Ceil", "Erf", "Softplus",
                                "Sqrt", "Log", "Reciprocal", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "HardSwish"])
def test_unary_nan_inf(op, target, tmp_path):
    x = SPECIALS
    check_model(node_model(op, {"x": x}, ["y"]), {"x": x}, target, tmp_path, rtol=1e-6, atol=0)
