"""com.microsoft QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearAdd and QLinearMul: inputs (X, X_scale, X_zero[, B, B_scale, B_zero], Y_scale,
Y_zero), each imported as DequantizeLinear -> the float op -> QuantizeLinear (see _qoperator). The pooling
ops' channels_last form is NHWC: transposed to NCHW around the pool.

onnxruntime's QLinearAveragePool with count_include_pad and ceil_mode divides a last window that runs past
the end padding by the whole kernel (AveragePool divides by the taps inside the padding): that window is
averaged over an input padded with zeros far enough, then the result cut back to AveragePool's shape."""

from __future__ import annotations

import onnx
from onnx import helper

from ..errors import UnsupportedError
from . import register_family
from ._qoperator import QOperator, QuantizedBody, attribute

# op_type -> (float op, binary?, the attributes passed on)
TABLE = {
    "QLinearSigmoid": ("Sigmoid", False, ()),
    "QLinearLeakyRelu": ("LeakyRelu", False, ("alpha",)),
    "QLinearSoftmax": ("Softmax", False, ("axis",)),
    "QLinearGlobalAveragePool": ("GlobalAveragePool", False, ()),
    "QLinearAveragePool": ("AveragePool", False, ("auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides")),
    "QLinearAdd": ("Add", True, ()),
    "QLinearMul": ("Mul", True, ()),
}


def _make(op_type: str, row) -> type:
    float_op, binary, passed = row

    class QLinearUnary(QOperator):
        def function_body(self, proto, opset, prefix):
            body = QuantizedBody(proto, prefix)
            inputs = [body.dequantize(0, 1, 2)]
            if binary:
                inputs.append(body.dequantize(3, 4, 5))
            attrs = {name: attribute(proto, name) for name in passed if attribute(proto, name) is not None}
            if op_type == "QLinearSoftmax" and int(attribute(proto, "opset", 13)) < 13:
                raise UnsupportedError("QLinearSoftmax with opset < 13 (softmax over flattened trailing axes)",
                                       f"node {proto.name!r} ({op_type})")
            channels_last = int(attribute(proto, "channels_last", 0) or 0)
            if channels_last and attribute(proto, "kernel_shape") is None:
                raise UnsupportedError(f"{op_type} with channels_last=1", f"node {proto.name!r} ({op_type})")
            if channels_last:  # NHWC: the pool reads NCHW
                rank = len(attribute(proto, "kernel_shape", [0, 0])) + 2
                inputs = [body.node("Transpose", inputs, perm=[0, rank - 1, *range(1, rank - 1)])]
            if op_type == "QLinearAveragePool" and _windows_may_pass_the_padding(attrs):
                y = _whole_kernel_average(body, inputs[0], attrs)
            else:
                y = body.node(float_op, inputs, **attrs)
            if channels_last:
                y = body.node("Transpose", [y], perm=[0, *range(2, rank), 1])
            first = 6 if binary else 3
            body.quantize(y, first, first + 1)
            return body.done()

    QLinearUnary.__name__ = QLinearUnary.__qualname__ = op_type
    QLinearUnary.op_type = op_type
    return QLinearUnary


def _windows_may_pass_the_padding(attrs: dict) -> bool:
    explicit = attrs.get("auto_pad", b"NOTSET") in (b"NOTSET", "NOTSET")  # SAME pads hold every window
    return explicit and bool(attrs.get("ceil_mode")) and bool(attrs.get("count_include_pad"))


def _whole_kernel_average(body: QuantizedBody, x: str, attrs: dict) -> str:
    """AveragePool dividing every window by the kernel's size: x padded with zeros by the pads plus
    stride - 1 at each end (so ceil_mode's last window fits), pooled without padding, then cut to the shape
    AveragePool with the node's attributes has (mlcc folds that Shape at build time)."""
    kernel, strides = list(attrs["kernel_shape"]), list(attrs.get("strides") or [1] * len(attrs["kernel_shape"]))
    rank = len(kernel)
    pads = list(attrs.get("pads") or [0] * 2 * rank)
    widened = [0, 0, *pads[:rank], 0, 0, *(p + s - 1 for p, s in zip(pads[rank:], strides))]
    padded = body.node("Pad", [x, _ints(body, widened)], mode="constant")
    pooled = body.node("AveragePool", [padded], kernel_shape=kernel, strides=strides)
    shaped = body.node("Shape", [body.node("AveragePool", [x], **attrs)])
    ends = body.node("Slice", [shaped, _ints(body, [2]), _ints(body, [2 + rank])])
    return body.node("Slice", [pooled, _ints(body, [0] * rank), ends, _ints(body, list(range(2, 2 + rank)))])


def _ints(body: QuantizedBody, values: list[int]) -> str:
    return body.node("Constant", [], value=helper.make_tensor("ints", onnx.TensorProto.INT64, [len(values)], values))


register_family(_make, TABLE)
