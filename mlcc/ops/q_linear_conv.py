"""QLinearConv: y = saturate(round((conv(x - x_zero, w - w_zero) + B) * x_scale * w_scale / y_scale) + y_zero)
on 8-bit x and w, accumulated in int32 and rescaled in double, rounding half to even (as the ONNX reference
does). W's scale and zero point are per tensor or per output channel; B is int32. See _quant.emit_qconv."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._conv import CONV_ATTRS
from ._quant import QConv, emit_qconv


@register
class QLinearConv(Op):
    op_type = "QLinearConv"
    vector_families = ("qs8-gemm",)
    quantized_form = "qlinear_conv"  # passes/lower_quantized_islands makes it a QuantizedConv where it can
    attrs = dict(CONV_ATTRS)

    def lower(self, node: Node, ctx) -> None:
        x, x_scale, x_zero, w, w_scale, w_zero, y_scale, y_zero, bias = (node.input(i) for i in range(9))
        emit_qconv(node, ctx, QConv(x, w, node.outputs[0], x_zero, w_zero, bias, x_scale, w_scale, y_scale, y_zero))

    def flops(self, node: Node) -> int:
        w = node.inputs[3]
        return 2 * node.outputs[0].size * w.size // w.shape[0]
