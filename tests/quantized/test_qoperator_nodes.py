"""Single com.microsoft quantized ops against onnxruntime (graph optimisation off), in the forms the
quantized models do not reach: QGemm with a float output and per-column B, NHWC QLinearAveragePool,
DynamicQuantizeMatMul with and without bias and zero point."""

import numpy as np
import pytest

from tests.golden import build_and_run, node_model
from tests.quantized.reference import reference

MS = "com.microsoft"


def _model(op_type, inputs, initializers, attrs, y_type):
    model = node_model(op_type, inputs, {"y": y_type}, attrs, opset=1, initializers=initializers, domain=MS)
    model.opset_import.append(__import__("onnx").helper.make_opsetid("", 17))
    return model


def _check(model, feeds, target, tmp_path, step) -> dict:
    got, report = build_and_run(model, feeds, target, tmp_path)
    want = reference(model, feeds)["y"]
    assert got["y"].shape == want.shape
    assert np.abs(got["y"].astype(np.float64) - want).max() <= step, np.abs(got["y"].astype(np.float64) - want).max()
    return report


def _u8(*shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)


def _s8(*shape, seed=1):
    return np.random.default_rng(seed).integers(-127, 128, shape).astype(np.int8)


@pytest.mark.parametrize("trans_b,per_column,float_out,alpha", [(1, True, True, 1.0), (0, False, False, 1.0),
                                                                (0, True, False, 1.0), (0, False, False, -0.75),
                                                                (1, True, True, 1.5)])
def test_qgemm(trans_b, per_column, float_out, alpha, target, tmp_path):
    a = _u8(3, 20)
    b = _s8(7, 20) if trans_b else _s8(20, 7)
    b_scale = np.linspace(0.01, 0.03, 7).astype(np.float32) if per_column else np.float32(0.02)
    b_zero = np.zeros(7, np.int8) if per_column else np.int8(0)
    inits = {"a_scale": np.float32(0.05), "a_zero": np.uint8(120), "b": b, "b_scale": b_scale, "b_zero": b_zero,
             "c": np.arange(-3, 4).astype(np.int32) * 50}
    if not float_out:
        inits.update(y_scale=np.float32(0.5), y_zero=np.uint8(128))
    model = _model("QGemm", {"a": a}, inits, {"transB": trans_b, "alpha": alpha},
                   (np.float32 if float_out else np.uint8, (3, 7)))
    _check(model, {"a": a}, target, tmp_path, 1e-4 if float_out else 0.5)


def test_qlinear_average_pool_nhwc(target, tmp_path):
    x = _u8(1, 5, 6, 3)
    inits = {"xs": np.float32(0.1), "xz": np.uint8(10), "ys": np.float32(0.08), "yz": np.uint8(5)}
    model = _model("QLinearAveragePool", {"x": x}, inits, {"channels_last": 1, "kernel_shape": [2, 2], "strides": [1, 2]},
                   (np.uint8, (1, 4, 3, 3)))
    _check(model, {"x": x}, target, tmp_path, 0.08)


@pytest.mark.parametrize("bias,zero", [(True, False), (False, True)])
def test_dynamic_quantize_mat_mul(bias, zero, target, tmp_path):
    a = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
    inits = {"b": _s8(16, 5), "b_scale": np.linspace(0.01, 0.02, 5).astype(np.float32)}
    inits["b_zero"] = _s8(5, seed=4) // 16 if zero else np.zeros(5, np.int8)
    if bias:
        inits["bias"] = np.linspace(-1, 1, 5).astype(np.float32)
    model = _model("DynamicQuantizeMatMul", {"a": a}, inits, None, (np.float32, (4, 5)))
    report = _check(model, {"a": a}, target, tmp_path, 1e-4)
    if not zero:  # B less its zero point is int8: the product runs on qs8-packed (passes/fuse_integer_matmul)
        assert "PackedIntegerMatMul" in report["ops"], report["ops"]


@pytest.mark.parametrize("attrs,shape", [
    # ceil_mode's last windows run past the end padding in both dims: onnxruntime divides them by the kernel
    ({"ceil_mode": 1, "count_include_pad": 1, "kernel_shape": [3, 2], "pads": [2, 1, 1, 0], "strides": [2, 2]},
     (1, 3, 7, 16)),
    ({"ceil_mode": 1, "count_include_pad": 0, "kernel_shape": [3, 3], "strides": [2, 2]}, (1, 3, 5, 15)),
    ({"ceil_mode": 1, "count_include_pad": 1, "kernel_shape": [2, 2], "strides": [2, 2], "channels_last": 1},
     (1, 6, 15, 3)),
])
def test_qlinear_average_pool_ceil_mode(attrs, shape, target, tmp_path):
    x = _s8(1, 11, 30, 3) if attrs.get("channels_last") else _s8(1, 3, 11, 30)
    inits = {"xs": np.float32(0.05), "xz": np.int8(3), "ys": np.float32(0.05), "yz": np.int8(3)}
    model = _model("QLinearAveragePool", {"x": x}, inits, attrs, (np.int8, shape))
    _check(model, {"x": x}, target, tmp_path, 1)  # one step: the same scale in and out makes .5 ties common
