"""ConvInteger: int32 Y = conv(X - x_zero_point, W - w_zero_point) on 8-bit X and W, with Conv's attributes;
W's zero point is per tensor or per output channel. Rendered by templates/ops/qconv.c.j2 (see _quant)."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._conv import CONV_ATTRS
from ._quant import QConv, emit_qconv


@register
class ConvInteger(Op):
    op_type = "ConvInteger"
    vector_families = ("qs8-gemm",)
    attrs = dict(CONV_ATTRS)

    def lower(self, node: Node, ctx) -> None:
        emit_qconv(node, ctx, QConv(node.inputs[0], node.inputs[1], node.outputs[0], node.input(2), node.input(3)))

    def flops(self, node: Node) -> int:
        w = node.inputs[1]
        return 2 * node.outputs[0].size * w.size // w.shape[0]
