"""Golden tests of the elementwise table against onnxruntime (onnx's reference where onnxruntime lacks the op
or the type), on every target. Most models run several ops side by side on the same inputs, so one build
covers a group."""

import math

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tests.golden import check_model, node_model, rand


def ops_model(nodes: list, inputs: dict, opset: int = 17, initializers: dict | None = None,
              ml_opset: int | None = None) -> onnx.ModelProto:
    """One model with a node per (op, input names, attrs); node k writes output y<k>_<op>."""
    protos = [helper.make_node(op, names, [f"y{k}_{op}"], domain="ai.onnx.ml" if op == "Binarizer" else None, **attrs)
              for k, (op, names, attrs) in enumerate(nodes)]
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                    for n, a in inputs.items()]
    outputs = [helper.make_tensor_value_info(p.output[0], onnx.TensorProto.UNDEFINED, None) for p in protos]
    inits = [onnx.numpy_helper.from_array(np.asarray(a), n) for n, a in (initializers or {}).items()]
    graph = helper.make_graph(protos, "ops", graph_inputs, outputs, inits)
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("ai.onnx.ml", ml_opset)] if ml_opset else [])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8 if opset < 21 else 10
    return onnx.shape_inference.infer_shapes(model)


def unary(ops: list[str], name: str = "x", **attrs) -> list:
    return [(op, [name], attrs) for op in ops]


def onnx_reference(model: onnx.ModelProto, feeds: dict) -> dict:
    names = [o.name for o in model.graph.output]
    with np.errstate(all="ignore"):  # overflows to inf and NaN from inf are what the tests feed
        return dict(zip(names, ReferenceEvaluator(model).run(None, feeds)))


# --- float unary math -------------------------------------------------------------------------
ANY_REAL = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Floor", "Ceil", "Erf", "Softplus", "HardSwish", "Sin",
            "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Softsign", "Mish", "Sign", "Round"]
POSITIVE = ["Sqrt", "Log", "Reciprocal", "Acosh"]  # fed x >= 1
UNIT = ["Asin", "Acos", "Atanh"]  # fed |x| < 1
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.50000006, 1e8 + 0.0], np.float32)


def _unary_feeds(dtype) -> dict:
    return {"x": np.concatenate([rand(3, 10).ravel(), HALVES]).astype(dtype),
            "g": rand(13, low=1.0, high=6.0).astype(dtype), "u": rand(13, low=-0.99, high=0.99).astype(dtype)}


def _unary_nodes() -> list:
    return unary(ANY_REAL) + unary(POSITIVE, "g") + unary(UNIT, "u")


def test_unary_float32(target, tmp_path):
    feeds = _unary_feeds(np.float32)
    check_model(ops_model(_unary_nodes(), feeds, opset=18), feeds, target, tmp_path, rtol=1e-5, atol=1e-6)


def test_unary_float64(target, tmp_path):
    # onnxruntime has no double kernels for half of these: numpy (onnx's reference) is the oracle
    feeds = _unary_feeds(np.float64)
    model = ops_model(_unary_nodes() + unary(["IsNaN", "IsInf"]), feeds, opset=18)
    expected = onnx_reference(model, feeds)
    expected.update({n: np.vectorize(math.erf)(feeds["x"]) for n in expected if n.endswith("_Erf")})  # onnx's is float32
    check_model(model, feeds, target, tmp_path, rtol=1e-13, atol=1e-15, expected=expected)


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5], np.float32)


def test_unary_nan_inf(target, tmp_path):
    ops = [*ANY_REAL, *POSITIVE, *UNIT, "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Celu", "ThresholdedRelu", "Swish"]
    feeds = {"x": SPECIALS}
    check_model(ops_model(unary(ops), feeds, opset=24), feeds, target, tmp_path, rtol=1e-6, atol=0)


def test_softplus_mish_large_magnitudes(target, tmp_path):
    x = np.array([-1000.0, -100.0, -30.0, -1.0, 0.0, 1.0, 30.0, 88.0, 100.0, 1000.0, np.inf, -np.inf], np.float32)
    # onnxruntime flushes Mish's subnormal results (x = -100) to zero
    check_model(ops_model(unary(["Softplus", "Mish"]), {"x": x}, opset=18), {"x": x}, target,
                tmp_path, rtol=1e-6, atol=1e-38)


def test_is_nan_is_inf(target, tmp_path):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -1.0, 3e38, -np.nan], np.float32)
    nodes = [("IsNaN", ["x"], {})] + [("IsInf", ["x"], {"detect_positive": p, "detect_negative": n})
                                      for p in (0, 1) for n in (0, 1)]
    check_model(ops_model(nodes, {"x": x}, opset=20), {"x": x}, target, tmp_path)


# --- attributes -------------------------------------------------------------------------------
ATTRIBUTED = [("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("Selu", {"alpha": 1.5, "gamma": 0.5}),
              ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
              ("Celu", {}), ("Celu", {"alpha": 2.5}), ("ThresholdedRelu", {}), ("ThresholdedRelu", {"alpha": -0.3}),
              ("Shrink", {}), ("Shrink", {"bias": 1.5, "lambd": 1.0}), ("Swish", {}), ("Swish", {"alpha": 0.3})]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attributes(dtype, target, tmp_path):
    x = (rand(3, 8) * 2).astype(dtype)
    nodes = [(op, ["x"], attrs) for op, attrs in ATTRIBUTED if dtype == np.float32 or op not in ("Celu", "Gelu")]
    model = ops_model(nodes, {"x": x}, opset=24)
    expected = None if dtype == np.float32 else onnx_reference(model, {"x": x})
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6, expected=expected)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_integer_unary(dtype, target, tmp_path):
    x = np.array([[0, 1, 2, 3, 5, 9], [4, 100, 126, 127, 0, 8]], dtype)
    if np.dtype(dtype).kind == "i":
        x[1, :4] = [-1, -2, -127, -128]
    nodes = unary(["Sign", "Abs"]) + [("Shrink", ["x"], {"bias": 1.5, "lambd": 2.0}), ("Shrink", ["x"], {})]
    nodes += unary(["Neg", "Relu"]) if np.dtype(dtype).kind == "i" else []
    check_model(ops_model(nodes, {"x": x}, opset=18), {"x": x}, target, tmp_path)


# --- binary arithmetic ------------------------------------------------------------------------
@pytest.mark.parametrize("shapes", [((), ()), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (2, 3))])  # (): no loop
def test_binary_broadcast(shapes, target, tmp_path):
    a, b = rand(*shapes[0], seed=1), rand(*shapes[1], seed=2)
    b = np.where(np.abs(b) < 0.2, 1.0, b).astype(np.float32)
    feeds = {"a": a, "b": b}
    nodes = [(op, ["a", "b"], {}) for op in ("Add", "Sub", "Mul", "Div")]
    check_model(ops_model(nodes, feeds), feeds, target, tmp_path)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float64])
def test_binary_types(dtype, target, tmp_path):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    b = np.array([1, 2, 3, 5], dtype)
    if np.dtype(dtype).kind != "u":
        a[0] = -a[0] - 3
    feeds = {"a": a, "b": b}
    nodes = [(op, ["a", "b"], {}) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min")]
    nodes += [("Sum", ["a", "b", "a"], {}), ("Mean", ["a", "b", "b"], {})] if dtype == np.float64 else []
    model = ops_model(nodes, feeds)
    expected = onnx_reference(model, feeds) if dtype == np.float64 else None  # onnxruntime: no double Mean
    check_model(model, feeds, target, tmp_path, rtol=1e-15, atol=0, expected=expected)


def test_pow(target, tmp_path):
    feeds = {"a": rand(3, 4, low=0.1, high=3.0, seed=3), "b": rand(4, low=-2.0, high=2.0, seed=4),
             "s": rand(2, 5, seed=5), "k": np.array([2, 3], np.int64).reshape(2, 1)}
    nodes = [("Pow", ["a", "b"], {}), ("Pow", ["s", "k"], {})]  # a negative base with integer exponents
    check_model(ops_model(nodes, feeds, opset=15), feeds, target, tmp_path, rtol=1e-5, atol=1e-6)


POW_TYPES = [(np.float32, np.int32), (np.float32, np.int64), (np.int32, np.float32), (np.int32, np.int32),
             (np.int64, np.float32), (np.int64, np.int64), (np.float64, np.float64), (np.float64, np.int64)]


def test_pow_types(target, tmp_path):
    feeds, nodes = {}, []
    for i, (base, exponent) in enumerate(POW_TYPES):
        feeds[f"a{i}"] = np.array([1, 2, 3, -2, 5, 0], base)
        feeds[f"b{i}"] = np.array([4, 5, 6, 3, 2, 3], exponent)
        nodes.append(("Pow", [f"a{i}", f"b{i}"], {}))
    check_model(ops_model(nodes, feeds, opset=15), feeds, target, tmp_path, rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64])
def test_mod(dtype, target, tmp_path):
    kind = np.dtype(dtype).kind
    a = np.array([[-4.3, 7.2, 5, 4.3, -7.2, 8], [9, -9, 0, 12, -12, 6]]) if kind != "u" else np.array([[4, 7, 5, 255, 0, 8]] * 2)
    b = np.array([2.1, -3.4, 8, -2.1, 3.4, 5]) if kind != "u" else np.array([2, 3, 8, 7, 3, 5])
    a, b = a.astype(dtype), b.astype(dtype)
    b[b == 0] = 3
    feeds = {"a": a, "b": b}
    model = ops_model([("Mod", ["a", "b"], {"fmod": 0}), ("Mod", ["a", "b"], {"fmod": 1})], feeds, opset=13)
    # onnxruntime refuses fmod=0 on floats (newer onnx allows it: numpy's mod)
    expected = onnx_reference(model, feeds) if kind == "f" else None
    check_model(model, feeds, target, tmp_path, rtol=1e-6, atol=1e-6, expected=expected)


def test_mod_float_edges(target, tmp_path):
    a = np.array([0.0, -0.0, 0.0, -0.0, -3.0, 3.0, -1.0, 1.0, np.inf, -np.inf, 1.0, 1.0, np.nan, 1.0], np.float32)
    b = np.array([-2.0, 2.0, 2.0, -2.0, np.inf, np.inf, -np.inf, -np.inf, 2.0, 2.0, 0.0, -0.0, 2.0, np.nan], np.float32)
    feeds = {"a": a, "b": b}
    nodes = [("Mod", ["a", "b"], {"fmod": 0}), ("Mod", ["a", "b"], {"fmod": 1}),
             ("Reciprocal", ["y0_Mod"], {}), ("Reciprocal", ["y1_Mod"], {})]  # signs of zero show as +-inf
    model = ops_model(nodes, feeds, opset=13)
    check_model(model, feeds, target, tmp_path, rtol=0, atol=0, expected=onnx_reference(model, feeds))


# --- variadic ---------------------------------------------------------------------------------
VARIADIC_SHAPES = [[(2, 3, 4)], [(2, 3, 4), (4,)], [(2, 1, 4), (3, 1), (1, 1, 1)]]


@pytest.mark.parametrize("shapes", VARIADIC_SHAPES, ids=["1", "2", "3"])
def test_variadic(shapes, target, tmp_path):
    feeds = {f"x{i}": rand(*s, seed=10 + i) for i, s in enumerate(shapes)}
    nodes = [(op, list(feeds), {}) for op in ("Min", "Max", "Sum", "Mean")]
    check_model(ops_model(nodes, feeds), feeds, target, tmp_path, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_min_max_integers(dtype, target, tmp_path):
    feeds = {"a": np.array([[1, 5, 7], [2, 2, 9]], dtype), "b": np.array([3, 6, 7], dtype), "c": np.array([[0], [4]], dtype)}
    if np.dtype(dtype).kind == "i":
        feeds["a"][0, 1], feeds["b"][1] = -5, -6
    nodes = [(op, names, {}) for op in ("Min", "Max") for names in (["a"], ["a", "b"], ["a", "b", "c"])]
    check_model(ops_model(nodes, feeds, opset=13), feeds, target, tmp_path)


def test_min_max_nan(target, tmp_path):
    # a NaN operand makes the result NaN (as in onnxruntime and numpy), whichever side it is on
    feeds = {"a": np.array([np.nan, 1.0, np.nan, -np.inf, np.inf, 2.0], np.float32),
             "b": np.array([2.0, np.nan, np.nan, 0.0, 1.0, 2.0], np.float32),
             "c": np.array([1.0, 5.0, 0.0, 3.0, 3.0, np.nan], np.float32)}
    nodes = [(op, ["a", "b", "c"], {}) for op in ("Min", "Max")]
    check_model(ops_model(nodes, feeds), feeds, target, tmp_path, rtol=0, atol=0)


def test_prelu(target, tmp_path):
    x = rand(2, 3, 4, 5, seed=20)
    slopes = {"channel": rand(3, 1, 1, seed=21), "scalar": rand(1, seed=22), "full": rand(3, 4, 5, seed=23)}
    nodes = [("PRelu", ["x", name], {}) for name in slopes]
    check_model(ops_model(nodes, {"x": x}, initializers=slopes), {"x": x}, target, tmp_path, rtol=1e-6, atol=0)


# --- Clip -------------------------------------------------------------------------------------
def test_clip_opset6_attributes(target, tmp_path):
    x = rand(3, 7, seed=22)
    x[0, 0] = np.nan
    nodes = [("Clip", ["x"], attrs) for attrs in ({"min": -0.5, "max": 0.7}, {"min": 0.0}, {"max": 0.3}, {})]
    check_model(ops_model(nodes, {"x": x}, opset=10), {"x": x}, target, tmp_path, rtol=0, atol=0)


CLIP_BOUNDS = [["x", "min", "max"], ["x", "min"], ["x", "", "max"], ["x"]]


@pytest.mark.parametrize("as_inputs", [False, True], ids=["const", "graph_input"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_clip_opset11_inputs(as_inputs, dtype, target, tmp_path):
    x = (rand(4, 6, seed=23) * 10).astype(dtype)
    bounds = {"min": np.array(-3, dtype), "max": np.array(4, dtype)}
    feeds, inits = ({"x": x, **bounds}, {}) if as_inputs else ({"x": x}, bounds)
    nodes = [("Clip", names, {}) for names in CLIP_BOUNDS]
    check_model(ops_model(nodes, feeds, opset=13, initializers=inits), feeds, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_clip_one_bound_constant_one_computed(dtype, target, tmp_path):
    # the run-time bound is the operand at its own input position, whichever bound is the constant
    x = (rand(4, 6, seed=24) * 10).astype(dtype)
    feeds = {"x": x, "hi_in": np.array(4, dtype), "lo_in": np.array(-3, dtype)}
    inits = {"lo": np.array(-2, dtype), "hi": np.array(5, dtype)}
    nodes = [("Clip", ["x", "lo", "hi_in"], {}), ("Clip", ["x", "lo_in", "hi"], {})]
    check_model(ops_model(nodes, feeds, opset=13, initializers=inits), feeds, target, tmp_path, rtol=0, atol=0)


def test_clip_nan_inf_and_crossed_bounds(target, tmp_path):
    x = np.array([np.nan, np.inf, -np.inf, 0.5, -2.0, 3.0], np.float32)
    inits = {"lo": np.array(-1, np.float32), "hi": np.array(1, np.float32)}
    nodes = [("Clip", ["x", "lo", "hi"], {}), ("Clip", ["x", "hi", "lo"], {})]  # min above max: max wins
    check_model(ops_model(nodes, {"x": x}, initializers=inits), {"x": x}, target, tmp_path, rtol=0, atol=0)


# --- comparison, logic, selection -------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_comparison(dtype, target, tmp_path):
    a = np.array([[1, 2, 3, 4], [0, 5, 5, 1], [2, 2, 2, 2]], dtype)
    b = np.array([2, 2, 5, 4], dtype)
    if dtype == np.float32:
        a[0, 0], b[1] = np.nan, np.inf
    feeds = {"a": a, "b": b}
    nodes = [(op, ["a", "b"], {}) for op in ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual")]
    check_model(ops_model(nodes, feeds), feeds, target, tmp_path)


@pytest.mark.parametrize("opset", [12, 15])
def test_or_equal_function_versions(opset, target, tmp_path):
    # versions 12-15 of LessOrEqual/GreaterOrEqual are defined by a function body alone: no per-node shape inference
    a = np.array([[1, 2, 3, 4], [0, 5, 5, 1], [2, 2, 2, 2]], np.float32)
    feeds = {"a": a, "b": np.array([2, 2, 5, 4], np.float32)}
    nodes = [(op, ["a", "b"], {}) for op in ("LessOrEqual", "GreaterOrEqual")]
    check_model(ops_model(nodes, feeds, opset=opset), feeds, target, tmp_path)


def test_logic(target, tmp_path):
    feeds = {"a": np.array([[True, False], [True, True], [False, False]]), "b": np.array([True, False])}
    nodes = [(op, ["a", "b"], {}) for op in ("And", "Or", "Xor", "Equal")] + [("Not", ["a"], {})]
    check_model(ops_model(nodes, feeds), feeds, target, tmp_path)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_where(dtype, target, tmp_path):
    rng = np.random.default_rng(24)
    feeds, nodes = {}, []
    for k, shapes in enumerate([((2, 3), (2, 3), (2, 3)), ((3,), (2, 1), (1, 3)), ((2, 1, 3), (4, 1), ())]):
        feeds[f"c{k}"] = rng.random(shapes[0]) > 0.5
        feeds[f"x{k}"] = rng.integers(-9, 9, shapes[1]).astype(dtype)
        feeds[f"y{k}"] = rng.integers(-9, 9, shapes[2]).astype(dtype)
        nodes.append(("Where", [f"c{k}", f"x{k}", f"y{k}"], {}))
    check_model(ops_model(nodes, feeds), feeds, target, tmp_path, rtol=0, atol=0)


# --- bits -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
def test_bitwise(dtype, target, tmp_path):
    info = np.iinfo(dtype)
    a = np.array([[0, 1, info.max, info.min, 0x55, 3], [7, 8, 9, 10, 11, 12]], dtype)
    b = np.array([info.max, 0x0f, 6, 5, 0x33, info.min], dtype)
    feeds = {"a": a, "b": b}
    nodes = [(op, ["a", "b"], {}) for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")] + [("BitwiseNot", ["a"], {})]
    check_model(ops_model(nodes, feeds, opset=18), feeds, target, tmp_path)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int32, np.int64])
def test_bit_shift(dtype, target, tmp_path):
    width = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    a = np.array([[1, 2, 3, 0x7f, 16, 255 if not signed else -8], [5, 6, 7, 8, 9, 10]]).astype(dtype)
    shifts = [0, 1, 3, width - 1, width, 2] if not signed else [0, 1, -1, width - 1, width, 2]
    b = np.array(shifts).astype(dtype)
    feeds = {"a": a, "b": b}
    nodes = [("BitShift", ["a", "b"], {"direction": d}) for d in ("LEFT", "RIGHT")]
    model = ops_model(nodes, feeds, opset=28 if signed else 11)  # signed types since opset 28
    # onnxruntime shifts unsigned 8/32/64-bit only and leaves counts of the width or more to the machine
    check_model(model, feeds, target, tmp_path, expected=onnx_reference(model, feeds))


def test_binarizer(target, tmp_path):
    feeds = {"x": np.array([[-1.0, 0.0, 0.5], [1.5, 0.75, 2.0]], np.float32)}
    nodes = [("Binarizer", ["x"], {}), ("Binarizer", ["x"], {"threshold": 0.75})]
    check_model(ops_model(nodes, feeds, ml_opset=1), feeds, target, tmp_path, rtol=0, atol=0)


def test_unsupported_dtype_is_a_clear_error(tmp_path):
    from mlcc.errors import UnsupportedError
    from tests.golden import build_and_run

    x = rand(3)
    with pytest.raises(UnsupportedError, match="approximate='cubic'"):
        build_and_run(node_model("Gelu", {"x": x}, ["y"], {"approximate": "cubic"}, opset=20), {"x": x}, "host", tmp_path)
