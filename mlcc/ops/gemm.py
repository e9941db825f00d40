"""Gemm: Y = alpha * op(A) * op(B) + beta * C, op = optional transpose, C unidirectionally broadcast.

Transposes cost nothing (strides); a constant B is packed at build time with alpha folded in. C is
optional from opset 11 (required before, but a model may still leave it empty).

Internal extension (ONNX's inference refuses it in models; passes/fuse_matmul_add makes it): A of rank
above 2 with transA=0 is a stack of rows, [..., K] x [K, N] -> [..., N], one product over all the rows.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._epilogue import node_epilogue
from ._fold import MakeConstant, float_const
from ._gemm import Operand, bias_strides, emit_gemm


def _dims(node: Node) -> tuple[int, int, int]:
    a, b = node.inputs[0], node.inputs[1]
    stacked_rows = len(a.shape) > 2 and not node.attrs["transA"]
    if (len(a.shape) != 2 and not stacked_rows) or len(b.shape) != 2:
        raise UnsupportedError(f"Gemm needs 2-D A and B, got {a.type_str()} and {b.type_str()}", node.where())
    m, k = a.shape[::-1] if node.attrs["transA"] else (a.size // max(a.shape[-1], 1), a.shape[-1])
    kb, n = b.shape[::-1] if node.attrs["transB"] else b.shape
    if k != kb:
        raise UnsupportedError(f"Gemm inner dimensions differ: {k} and {kb}", node.where())
    return m, n, k


@register
class Gemm(Op):
    op_type = "Gemm"
    vector_families = ("f32-gemm",)
    quantized_form = "gemm"
    attrs = {"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}
    epilogue_input = 3
    variable_extents = True  # m, n, k as run-time sizes (tiles and chunks chosen for the largest)

    def absorb_bias(self, node: Node, bias: np.ndarray) -> bool:
        old, y = node.input(2), node.outputs[0]
        if bias.ndim > 2 or (old is not None and not old.is_const):
            return False
        scaled = np.float32(node.attrs["beta"]) * old.data if old is not None else np.zeros((), np.float32)
        total = (scaled + bias).astype(np.float32)
        if np.broadcast_shapes(total.shape, y.shape) != y.shape:
            return False
        if len(node.inputs[0].shape) > 2 and total.size != (total.shape[-1] if total.shape else 1):
            return False  # stacked rows take a bias along N only
        name = f"{old.name if old is not None else node.name + '_bias'}_fused"
        node.inputs = [*node.inputs[:2], Value(name, np.dtype(np.float32), total.shape, total), *node.inputs[3:]]
        node.attrs["beta"] = 1.0
        return True

    def fold_scale_shift(self, node: Node, scale, shift, constant: MakeConstant) -> bool:
        """Y = alpha A op(B) + beta C: scale op(B)'s columns; C' = beta C s + t (rows kept if C has them), beta = 1."""
        b, c = node.inputs[1], node.input(2)
        if not float_const(b) or (c is not None and not float_const(c)) or len(b.shape) != 2:
            return False
        m, n = node.outputs[0].shape
        if n != scale.size:
            return False
        columns = scale[:, None] if node.attrs.get("transB", 0) else scale[None, :]
        new_b = constant(f"{b.name}_folded", (b.data.astype(np.float64) * columns).astype(b.dtype))
        if c is None:
            new_c = constant(f"{node.name}_bias_folded", shift.astype(b.dtype))
        else:
            full = np.broadcast_to(c.data.astype(np.float64) * float(node.attrs.get("beta", 1.0)), (m, n))
            per_row = ((1, 1) + tuple(c.shape))[-2] != 1
            new_c = constant(f"{c.name}_folded", ((full if per_row else full[0]) * scale + shift).astype(c.dtype))
        node.inputs = [node.inputs[0], new_b, new_c]
        node.attrs["beta"] = 1.0
        return True

    def transposed_reads(self, node: Node) -> dict[int, str]:
        if node.outputs[0].dtype != np.float32 or len(node.inputs) < 2:
            return {}
        return {i: flag for i, flag in enumerate(("transA", "transB")) if len(node.inputs[i].shape) == 2}

    def lower(self, node: Node, ctx) -> None:
        a, b, c = node.inputs[0], node.inputs[1], node.input(2)
        if any(v is not None and v.dtype != np.float32 for v in (a, b, c)):
            raise UnsupportedError(f"Gemm on {a.dtype.name} is not supported yet", node.where())
        m, n, k = _dims(node)
        trans_a, trans_b = node.attrs["transA"], node.attrs["transB"]
        a_op = Operand(a, *((1, m) if trans_a else (k, 1)))
        b_op = Operand(b, *((1, k) if trans_b else (n, 1)))
        b_logical = None
        if b.is_const:
            b_logical = b.data.T if trans_b else b.data
        bias_shape = c.shape if c is not None else ()
        if len(a.shape) > 2:  # stacked rows: the bias may vary along N only
            if c is not None and c.size != (c.shape[-1] if c.shape else 1):
                raise UnsupportedError(f"a Gemm over stacked rows takes a bias along N only, not {c.type_str()}", node.where())
            bias_shape = bias_shape[-1:]
        bias_rs, bias_cs = bias_strides(bias_shape, m, n) if c is not None else (0, 0)
        emit_gemm(ctx, m, n, k, a_op, b_op, node.outputs[0], b_logical=b_logical,
                  alpha=float(node.attrs["alpha"]), bias=c, bias_rs=bias_rs, bias_cs=bias_cs,
                  beta=float(node.attrs["beta"]), epilogue=node_epilogue(node, self.epilogue_input, n, 1))

    def flops(self, node: Node) -> int:
        m, n, k = _dims(node)
        return 2 * m * n * k
