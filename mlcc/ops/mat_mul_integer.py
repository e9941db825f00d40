"""MatMulInteger: int32 Y = (A - a_zero_point) x (B - b_zero_point) on 8-bit A and B, with MatMul's
broadcasting of leading batch dims. A's zero point is per tensor or per row (M), B's per tensor or per
column (N). Rendered by templates/ops/qmatmul.c.j2, shared with QLinearMatMul."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._quant import QMatMul, emit_qmatmul


@register
class MatMulInteger(Op):
    op_type = "MatMulInteger"
    vector_families = ("qs8-gemm",)

    def lower(self, node: Node, ctx) -> None:
        a, b, a_zero, b_zero = node.inputs[0], node.inputs[1], node.input(2), node.input(3)
        emit_qmatmul(node, ctx, QMatMul(a, b, node.outputs[0], a_zero, b_zero))

    def flops(self, node: Node) -> int:
        return 2 * node.outputs[0].size * node.inputs[0].shape[-1]
