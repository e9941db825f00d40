"""Golden tests of the quantization ops against onnxruntime: QuantizeLinear / DequantizeLinear (per tensor,
per axis, blocked, with and without zero points, 8/16/32-bit), DynamicQuantizeLinear, MatMulInteger,
QLinearMatMul, ConvInteger and QLinearConv. Integer outputs must match exactly."""

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-6, atol=1e-6)


def _onnx_reference(model, feeds) -> dict:
    """Expected outputs from onnx's reference, for forms onnxruntime does not implement."""
    names = [o.name for o in model.graph.output]
    return dict(zip(names, ReferenceEvaluator(model).run(None, feeds)))


def _ints(dtype, *shape, seed=0):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, int(info.max) + 1, shape).astype(dtype)


# x / scale lands on halves (round to even), beyond the range (saturate) and on NaN-free extremes
TIES = np.array([0.0, 1.0, 3.0, 5.0, -1.0, -3.0, -5.0, 7.0, 1000.0, -1000.0, 255.0, 2.2], np.float32)


@pytest.mark.parametrize("opset,zero,scale", [
    (13, np.uint8(128), np.float32(2.0)),
    (13, np.int8(-3), np.float32(2.0)),
    (13, None, np.float32(0.5)),  # uint8 without a zero point
    (19, np.int8(0), np.float32(2.0)),
    (21, np.int16(-7), np.float32(2.0)),
    (21, np.uint16(300), np.float32(0.01)),
])
def test_quantize_per_tensor(opset, zero, scale, target, tmp_path):
    inits = {"s": np.asarray(scale)} if zero is None else {"s": np.asarray(scale), "z": np.asarray(zero)}
    model = node_model("QuantizeLinear", {"x": TIES}, ["y"], opset=opset, initializers=inits)
    check_model(model, {"x": TIES}, target, tmp_path)


@pytest.mark.parametrize("shape,axis", [((2, 3, 4), 1), ((3, 5), 0), ((2, 3, 4), -1)])
def test_quantize_per_axis(shape, axis, target, tmp_path):
    x = rand(*shape) * 100
    dim = shape[axis]
    scale = np.linspace(0.5, 2.0, dim).astype(np.float32)
    zero = np.arange(dim).astype(np.int8) - 2
    model = node_model("QuantizeLinear", {"x": x, "s": scale, "z": zero}, ["y"], {"axis": axis}, opset=13)
    check_model(model, {"x": x, "s": scale, "z": zero}, target, tmp_path)


# ragged but the second; the first's two blocks are one loop each, reading their parameters before it
@pytest.mark.parametrize("shape,axis,block", [((1, 5), 1, 3), ((6, 4), 0, 3), ((2, 7, 3), 1, 3)])
def test_quantize_blocked(shape, axis, block, target, tmp_path):
    x = rand(*shape) * 50
    pshape = list(shape)
    pshape[axis] = -(-shape[axis] // block)
    scale = rand(*pshape, seed=1, low=0.5, high=2.0)
    zero = _ints(np.uint8, *pshape, seed=2)
    model = node_model("QuantizeLinear", {"x": x}, ["y"], {"axis": axis, "block_size": block}, opset=21,
                       initializers={"s": scale, "z": zero})
    check_model(model, {"x": x}, target, tmp_path)


def test_quantize_output_dtype(target, tmp_path):
    model = node_model("QuantizeLinear", {"x": TIES}, ["y"], {"output_dtype": 3}, opset=21,  # int8, no zero point
                       initializers={"s": np.float32(2.0)})
    check_model(model, {"x": TIES}, target, tmp_path)


@pytest.mark.parametrize("dtype,zero", [(np.uint8, 128), (np.int8, -5), (np.int32, None), (np.int16, 3)])
def test_dequantize_per_tensor(dtype, zero, target, tmp_path):
    x = _ints(dtype, 3, 7)
    inits = {"s": np.float32(0.25)} if zero is None else {"s": np.float32(0.25), "z": np.asarray(zero, dtype)}
    model = node_model("DequantizeLinear", {"x": x}, ["y"], opset=21, initializers=inits)
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("pshape,attrs,opset", [((6,), {"axis": 1}, 13), ((2, 3, 3), {"axis": 1, "block_size": 2}, 21)])
def test_dequantize_per_axis_and_blocked(pshape, attrs, opset, target, tmp_path):
    x = _ints(np.int8, 2, 6, 3)
    scale, zero = rand(*pshape, low=0.1, high=1.0), _ints(np.int8, *pshape, seed=1)
    model = node_model("DequantizeLinear", {"x": x, "s": scale, "z": zero}, ["y"], attrs, opset=opset)
    check_model(model, {"x": x, "s": scale, "z": zero}, target, tmp_path, **TOL)


@pytest.mark.parametrize("x", [
    rand(4, 5) * 3,
    rand(7, low=0.5, high=3.0),  # all positive: the range is widened down to zero
    rand(2, 16, low=-4.0, high=-1.0),  # all negative; whole lanes of 16 (no tail loop)
    np.zeros(5, np.float32),  # an empty range: scale 1, as in onnxruntime
])
def test_dynamic_quantize_linear(x, target, tmp_path):
    check_model(node_model("DynamicQuantizeLinear", {"x": x}, ["y", "y_scale", "y_zero_point"], opset=11),
                {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("a_shape,b_shape,a_zero,b_zero", [
    ((4, 3), (3, 5), np.uint8(12), np.uint8(7)),
    ((4, 3), (3, 5), np.arange(4).astype(np.uint8), np.arange(5).astype(np.uint8) * 3),  # per row / column (not in onnxruntime)
    ((2, 3, 6), (6, 4), None, None),
    ((2, 1, 3, 6), (5, 6, 2), np.uint8(100), None),  # broadcast batch dims
    ((6,), (2, 6, 3), np.uint8(9), np.uint8(4)),  # a vector A: one row, its dim dropped
    ((2, 4, 6), (6,), None, np.uint8(250)),  # a vector B: one column
])
def test_matmul_integer(a_shape, b_shape, a_zero, b_zero, target, tmp_path):
    a, b = _ints(np.uint8, *a_shape), _ints(np.uint8, *b_shape, seed=1)
    inits, order = {}, ["a", "b"]
    for name, value in (("az", a_zero), ("bz", b_zero)):
        if value is not None:
            inits[name] = value
    order += ["az" if a_zero is not None else "", "bz"] if b_zero is not None else (["az"] if a_zero is not None else [])
    model = node_model("MatMulInteger", {"a": a, "b": b}, ["y"], {"_order": order}, opset=10, initializers=inits)
    expected = None
    if np.size(a_zero) > 1:  # a per-row zero point: onnxruntime and onnx's reference lack it; numpy then
        rows = a.astype(np.int32) - a_zero.astype(np.int32)[:, None]
        expected = {"y": np.matmul(rows, b.astype(np.int32) - b_zero.astype(np.int32))}
    check_model(model, {"a": a, "b": b}, target, tmp_path, expected=expected)


@pytest.mark.parametrize("a_dtype,b_dtype,b_zero", [
    (np.uint8, np.int8, None),  # as onnxruntime's dynamic quantization writes it (a's zero point at run time)
    (np.int8, np.uint8, np.uint8(128)),  # b less its zero point still int8: packed too
])
def test_matmul_integer_by_constant_weights(a_dtype, b_dtype, b_zero, target, tmp_path):
    """The int32 PackedIntegerMatMul (passes/fuse_integer_matmul) on qs8-packed: rows around a tile, columns past
    a panel, k not a multiple of 4."""
    a, b = _ints(a_dtype, 2, 9, 7), _ints(b_dtype, 7, 18, seed=1)
    inits = {"b": b, "az": np.array(3, a_dtype)} | ({"bz": b_zero} if b_zero is not None else {})
    model = node_model("MatMulInteger", {"a": a}, ["y"], {"_order": ["a", *inits]}, opset=10, initializers=inits)
    report = check_model(model, {"a": a}, target, tmp_path)
    assert report["ops"] == {"PackedIntegerMatMul": 1}


@pytest.mark.parametrize("dtype,a_shape,b_shape,per_column", [
    (np.uint8, (5, 8), (8, 6), False),
    (np.int8, (2, 5, 8), (2, 8, 6), False),
    (np.uint8, (3, 16), (16, 4), True),  # b's scale and zero point per column
    (np.int8, (8,), (8, 6), False),  # a vector A (onnxruntime's quantizer writes these for a 1-D MatMul)
])
def test_qlinear_matmul(dtype, a_shape, b_shape, per_column, target, tmp_path):
    a, b = _ints(dtype, *a_shape), _ints(dtype, *b_shape, seed=1)
    n = b_shape[-1]
    mid = np.asarray(0 if dtype == np.int8 else 128, dtype)
    inits = {
        "as": np.float32(0.02), "az": mid + dtype(3),
        "bs": np.linspace(0.01, 0.03, n).astype(np.float32) if per_column else np.float32(0.015),
        "bz": (mid + np.arange(n)).astype(dtype) if per_column else mid - dtype(2),
        "ys": np.float32(0.37), "yz": mid,
    }
    model = node_model("QLinearMatMul", {"a": a, "b": b}, ["y"],
                       {"_order": ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]}, opset=10, initializers=inits)
    check_model(model, {"a": a, "b": b}, target, tmp_path)


@pytest.mark.parametrize("x_shape,w_shape,attrs,w_zero", [
    ((1, 2, 5, 5), (3, 2, 3, 3), {}, np.uint8(2)),
    ((2, 4, 6, 7), (4, 2, 2, 3), {"group": 2, "pads": [1, 0, 1, 2], "strides": [2, 1]}, np.uint8(9)),
    ((2, 4, 5, 5), (4, 4, 3, 3), {"auto_pad": "SAME_LOWER"}, np.arange(4).astype(np.uint8)),  # per channel: not in onnxruntime
    ((1, 3, 9), (2, 3, 3), {"dilations": [2], "pads": [2, 1]}, None),  # 1-D
])
def test_conv_integer(x_shape, w_shape, attrs, w_zero, target, tmp_path):
    x, w = _ints(np.uint8, *x_shape), _ints(np.uint8, *w_shape, seed=1)
    inits = {"xz": np.uint8(120)}
    if w_zero is not None:
        inits["wz"] = w_zero
    model = node_model("ConvInteger", {"x": x, "w": w}, ["y"], attrs, opset=10, initializers=inits)
    expected = None if np.size(w_zero) <= 1 else _onnx_reference(model, {"x": x, "w": w})
    check_model(model, {"x": x, "w": w}, target, tmp_path, expected=expected)


@pytest.mark.parametrize("dtype,x_shape,w_shape,attrs,per_channel,bias", [
    (np.uint8, (1, 2, 6, 6), (3, 2, 3, 3), {"pads": [1, 1, 1, 1]}, False, True),
    (np.int8, (1, 4, 5, 7), (6, 2, 2, 2), {"group": 2, "strides": [2, 2]}, True, True),
    (np.uint8, (2, 3, 4, 4), (2, 3, 1, 1), {}, True, False),
])
def test_qlinear_conv(dtype, x_shape, w_shape, attrs, per_channel, bias, target, tmp_path):
    x, w = _ints(dtype, *x_shape), _ints(dtype, *w_shape, seed=1)
    m = w_shape[0]
    mid = np.asarray(0 if dtype == np.int8 else 128, dtype)
    inits = {
        "xs": np.float32(0.05), "xz": mid + dtype(5), "w": w,
        "ws": np.linspace(0.002, 0.01, m).astype(np.float32) if per_channel else np.float32(0.004),
        "wz": np.zeros(m, dtype) + mid if per_channel else mid,  # onnxruntime wants symmetric weights per channel
        "ys": np.float32(0.3), "yz": mid - dtype(4),
    }
    if bias:
        inits["b"] = np.random.default_rng(3).integers(-2000, 2000, m).astype(np.int32)
    order = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"] + (["b"] if bias else [])
    model = node_model("QLinearConv", {"x": x}, ["y"], {**attrs, "_order": order}, opset=10, initializers=inits)
    check_model(model, {"x": x}, target, tmp_path)
