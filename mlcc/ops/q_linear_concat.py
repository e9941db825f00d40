"""com.microsoft QLinearConcat(Y_scale, Y_zero, X0, X0_scale, X0_zero, X1, ...): each input dequantized,
concatenated along `axis`, quantized again (see _qoperator)."""

from __future__ import annotations

from . import register
from ._qoperator import QOperator, QuantizedBody, attribute


@register
class QLinearConcat(QOperator):
    op_type = "QLinearConcat"

    def function_body(self, proto, opset, prefix):
        body = QuantizedBody(proto, prefix)
        parts = [body.dequantize(i, i + 1, i + 2) for i in range(2, len(proto.input), 3)]
        body.quantize(body.node("Concat", parts, axis=int(attribute(proto, "axis"))), 0, 1)
        return body.done()
