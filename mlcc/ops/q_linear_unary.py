"""com.microsoft QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearAdd and QLinearMul: inputs (X, X_scale, X_zero[, B, B_scale, B_zero], Y_scale,
Y_zero), each imported as DequantizeLinear -> the float op -> QuantizeLinear (see _qoperator). The pooling
ops' channels_last form is NHWC: transposed to NCHW around the pool."""

from __future__ import annotations

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
            y = body.node(float_op, inputs, **attrs)
            if channels_last:
                y = body.node("Transpose", [y], perm=[0, *range(2, rank), 1])
            first = 6 if binary else 3
            body.quantize(y, first, first + 1)
            return body.done()

    QLinearUnary.__name__ = QLinearUnary.__qualname__ = op_type
    QLinearUnary.op_type = op_type
    return QLinearUnary


register_family(_make, TABLE)
