"""MatMulInteger: int32 Y = (A - a_zero_point) x (B - b_zero_point) on 8-bit A and B, with MatMul's
broadcasting of leading batch dims. A's zero point is per tensor or per row (M), B's per tensor or per
column (N). Rendered by templates/ops/qmatmul.c.j2, shared with QLinearMatMul."""

from __future__ import annotations

import numpy as np

from ..ir import Node, Value
from . import Op, register
from ._quant import QMatMul, emit_qmatmul


@register
class MatMulInteger(Op):
    op_type = "MatMulInteger"
    vector_families = ("qs8-gemm",)

    def lower(self, node: Node, ctx) -> None:
        a, b, a_zero, b_zero = node.inputs[0], node.inputs[1], node.input(2), node.input(3)
        emit_qmatmul(node, ctx, QMatMul(a, b, node.outputs[0], a_zero, b_zero))

    def packed_integer_product(self, node: Node) -> tuple[Value, np.ndarray, Value | None] | None:
        """A 2-D constant B whose values less its zero point (per tensor or per column) fit int8, and A's zero
        point one value: passes/fuse_integer_matmul runs it on qs8-packed (PackedIntegerMatMul)."""
        a, b, a_zero, b_zero = node.inputs[0], node.inputs[1], node.input(2), node.input(3)
        if (a.dtype not in (np.int8, np.uint8) or b.dtype not in (np.int8, np.uint8) or not b.is_const
                or len(b.shape) != 2 or 0 in b.shape or (a_zero is not None and a_zero.size != 1)
                or (b_zero is not None and (not b_zero.is_const or b_zero.size not in (1, b.shape[1])))):
            return None
        w = b.data.astype(np.int32)
        if b_zero is not None:
            w = w - b_zero.data.astype(np.int32).reshape(-1)
        if w.size and (w.min() < -128 or w.max() > 127):
            return None
        return a, np.ascontiguousarray(w.T.astype(np.int8)), a_zero

    def flops(self, node: Node) -> int:
        return 2 * node.outputs[0].size * node.inputs[0].shape[-1]
