"""QLinearMatMul: y = saturate(round((A - a_zero) x (B - b_zero) * a_scale * b_scale / y_scale) + y_zero) on
8-bit A and B, the product accumulated in int32 and rescaled in double, rounding half to even (as the ONNX
reference does). A's scale and zero point are per tensor or per row, B's per tensor or per column."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._quant import QMatMul, emit_qmatmul


@register
class QLinearMatMul(Op):
    op_type = "QLinearMatMul"
    vector_families = ("qs8-gemm",)

    def lower(self, node: Node, ctx) -> None:
        a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero = (node.input(i) for i in range(8))
        emit_qmatmul(node, ctx, QMatMul(a, b, node.outputs[0], a_zero, b_zero, a_scale, b_scale, y_scale, y_zero))

    def flops(self, node: Node) -> int:
        return 2 * node.outputs[0].size * node.inputs[0].shape[-1]
