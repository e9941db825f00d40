"""Golden tests of Cast, CastLike and BitCast against onnxruntime (and numpy's float16 for exact bits), on
every target. Each model casts one input to many types side by side, so one build covers a source type."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.golden import build_and_run, check_model, node_model

TYPES = [np.float32, np.float64, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
         np.uint64, np.bool_]


def _onnx_type(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def casts_model(x: np.ndarray, targets, op="Cast", opset=21):
    """x cast to each target type: output y_<type>. CastLike takes its target from an initializer."""
    nodes, inits, outputs = [], [], []
    for dst in targets:
        name = f"y_{np.dtype(dst).name}"
        if op == "Cast":
            nodes.append(helper.make_node("Cast", ["x"], [name], to=_onnx_type(dst)))
        else:
            like = f"like_{np.dtype(dst).name}"
            inits.append(helper.make_tensor(like, _onnx_type(dst), [0], []))
            nodes.append(helper.make_node("CastLike", ["x", like], [name]))
        outputs.append(helper.make_tensor_value_info(name, _onnx_type(dst), x.shape))
    graph = helper.make_graph(nodes, "casts", [helper.make_tensor_value_info("x", _onnx_type(x.dtype), x.shape)],
                              outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def _values(src) -> np.ndarray:
    """Values every type in TYPES holds exactly, so each cast is defined in C and in onnxruntime alike."""
    src = np.dtype(src)
    if src == np.bool_:
        return np.array([[True, False, True], [False, False, True]])
    if src.kind == "f":
        return np.array([[0.0, 1.0, 2.75, 100.9], [0.49, 7.5, 126.2, -0.0]], src)
    return np.array([[0, 1, 2, 100], [3, 7, 127, 55]], src)


@pytest.mark.parametrize("src", TYPES, ids=lambda t: np.dtype(t).name)
def test_cast_between_types(src, target, tmp_path):
    x = _values(src)
    check_model(casts_model(x, TYPES), {"x": x}, target, tmp_path, rtol=0, atol=0)


@pytest.mark.parametrize("src", [np.float32, np.float64, np.int32, np.int64, np.int8, np.int16], ids=lambda t: np.dtype(t).name)
def test_cast_negative_to_signed(src, target, tmp_path):
    x = np.array([-1, -2.9, -100.5, -127.0, 3.0, -0.5], np.float64).astype(src)
    dst = [t for t in (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.bool_)]
    check_model(casts_model(x, dst), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_cast_large_int64_to_int32_wraps(target, tmp_path):
    x = np.array([2**31 + 5, -(2**31) - 7, 2**40 + 3], np.int64)
    check_model(casts_model(x, [np.int32, np.uint32, np.float32]), {"x": x}, target, tmp_path, rtol=0, atol=0)


def _bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    """float16/float32 compared bit for bit, every NaN counting as equal to any other."""
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    width = {2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
    mismatch = np.flatnonzero((got.view(width) != want.view(width)) & ~nan)
    assert mismatch.size == 0, f"{mismatch.size} values differ, first {want.ravel()[mismatch[0]]!r} -> {got.ravel()[mismatch[0]]!r}"


def test_float16_to_float32_every_value(target, tmp_path):
    halves = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).reshape(256, 256)
    got, _ = build_and_run(casts_model(halves, [np.float32, np.float64, np.bool_]), {"x": halves}, target, tmp_path)
    _bits_equal(got["y_float32"], halves.astype(np.float32))
    np.testing.assert_array_equal(got["y_float64"], halves.astype(np.float64))
    np.testing.assert_array_equal(got["y_bool"], halves.astype(np.bool_))


def _float16_edges() -> np.ndarray:
    """Floats around every rounding decision of float32 -> float16: ties to even, the subnormal and normal
    ranges, overflow to infinity, signed zeros, infinities and NaN."""
    halves = np.arange(0, 0x7c01, 7, dtype=np.uint16).view(np.float16).astype(np.float32)
    below = np.nextafter(halves, np.float32(0))
    above = np.nextafter(halves, np.float32(np.inf))
    ulp = np.spacing(np.arange(0, 0x7c01, 7, dtype=np.uint16).view(np.float16)).astype(np.float32)
    ties = halves + ulp / 2
    specials = np.array([65504.0, 65519.99, 65520.0, 65536.0, 1e10, 2.0**-24, 2.0**-25, 2.0**-25 * 1.0001,
                         2.0**-26, 1e-30, 0.0, np.inf, np.nan, 2.0**-14, 2.0**-14 - 2.0**-25], np.float32)
    values = np.concatenate([halves, below, above, ties, specials])
    return np.concatenate([values, -values]).astype(np.float32)


def test_float32_to_float16_rounding(target, tmp_path):
    x = _float16_edges()
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    got, _ = build_and_run(casts_model(x, [np.float16]), {"x": x}, target, tmp_path)
    _bits_equal(got["y_float16"], want)


@pytest.mark.parametrize("src", [np.float64, np.int64, np.int32, np.uint8], ids=lambda t: np.dtype(t).name)
def test_cast_to_float16(src, target, tmp_path):
    x = np.array([0, 1, 3, 100, 2049, 2051, 4097, 65504, 65519, 65520, 70000, 5], np.float64).astype(src)
    if np.dtype(src) == np.float64:
        x = np.concatenate([x, [0.1, -2.5e-8, 1e-300, -np.inf, np.nan, 3.14159]])
    check_model(casts_model(x, [np.float16]), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_castlike(target, tmp_path):
    x = np.array([[0.0, -1.5, 2.25], [3.999, -7e4, 65519.0]], np.float32)
    dst = [np.float64, np.float16, np.int32, np.bool_]
    check_model(casts_model(x, dst, op="CastLike", opset=21), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_castlike_run_time_target(target, tmp_path):
    x = np.array([1.5, -2.0, 3.25], np.float16)
    like = np.zeros((2, 2), np.float64)  # a graph input: only its type matters
    check_model(node_model("CastLike", {"x": x, "like": like}, ["y"], opset=21), {"x": x, "like": like}, target,
                tmp_path, rtol=0, atol=0)


def test_castlike_folds_constant_input_with_run_time_target():
    from mlcc.frontend import import_model

    model = node_model("CastLike", {"like": np.zeros(3, np.float64)}, ["y"], opset=21,
                       initializers={"x": np.array([1.0, -np.inf], np.float32)}, attrs={"_order": ["x", "like"]})
    graph = import_model(model)
    assert graph.outputs[0].is_const
    np.testing.assert_array_equal(graph.outputs[0].data, np.array([1.0, -np.inf]))


BITCASTS = [(np.float32, np.int32), (np.int32, np.float32), (np.float64, np.int64), (np.uint64, np.float64),
            (np.int8, np.uint8), (np.bool_, np.uint8), (np.float16, np.uint16), (np.uint32, np.int32)]


@pytest.mark.parametrize("src,dst", BITCASTS, ids=[f"{np.dtype(a).name}-{np.dtype(b).name}" for a, b in BITCASTS])
def test_bitcast(src, dst, target, tmp_path):
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 256, (3, 4 * np.dtype(src).itemsize), dtype=np.uint8)
    x = raw > 127 if np.dtype(src) == np.bool_ else raw.view(src)
    if np.dtype(src).kind == "f":
        x = np.where(np.isnan(x), 1.0, x).astype(src)  # NaN payloads need not survive a float load
    model = node_model("BitCast", {"x": x}, ["y"], {"to": _onnx_type(dst)}, opset=26)
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0, expected={"y": x.view(dst)})


def test_bitcast_scalar(target, tmp_path):
    x = np.array(1.0, np.float32)
    model = node_model("BitCast", {"x": x}, ["y"], {"to": TensorProto.INT32}, opset=26)
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0, expected={"y": x.view(np.int32)})
