"""MatMul with numpy semantics: a 1-D A is a row, a 1-D B a column (the added dim is dropped again),
leading dims are batch dims broadcast against each other.

A single B matrix (the common Linear layer) makes one product over all of A's rows; otherwise one
product per output batch index. A constant B is packed at build time. Types other than float32 (double,
integers) take plain loops.

Internal attributes (set by passes/simplify_algebra, never read from a model): `_trans_a` / `_trans_b` = 1
read that operand (rank 2 or more, float32) with its last two axes swapped, through the kernel's strides.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, Role, lookup, register
from ._broadcast import loop_nest
from ._epilogue import node_epilogue
from ._fold import MakeConstant, float_const
from ._gemm import Operand, emit_gemm


def _matrices(node: Node):
    """(batch of A, batch of B, output batch, m, n, k) with 1-D operands promoted."""
    a, b = node.inputs[0], node.inputs[1]
    if not a.shape or not b.shape:
        raise UnsupportedError("MatMul operands must have at least one dimension", node.where())
    a_shape = (1, *a.shape) if len(a.shape) == 1 else tuple(a.shape)
    b_shape = (*b.shape, 1) if len(b.shape) == 1 else tuple(b.shape)
    if node.attrs.get("_trans_a", 0):
        a_shape = (*a_shape[:-2], a_shape[-1], a_shape[-2])
    if node.attrs.get("_trans_b", 0):
        b_shape = (*b_shape[:-2], b_shape[-1], b_shape[-2])
    (m, k), (kb, n) = a_shape[-2:], b_shape[-2:]
    if k != kb:
        raise UnsupportedError(f"MatMul inner dimensions differ: {a.type_str()} x {b.type_str()}", node.where())
    try:
        out_batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    except ValueError:
        raise UnsupportedError(f"MatMul batch dims do not broadcast: {a.type_str()} x {b.type_str()}", node.where()) from None
    return a_shape[:-2], b_shape[:-2], out_batch, m, n, k


@register
class MatMul(Op):
    op_type = "MatMul"
    vector_families = ("f32-gemm",)
    quantized_form = "matmul"
    epilogue_input = 2
    variable_extents = True  # m, n, k and batch counts as run-time sizes (B packed at build time only if constant)
    role = Role.MATMUL

    def transposed_reads(self, node: Node) -> dict[int, str]:
        if node.outputs[0].dtype != np.float32 or len(node.inputs) < 2:
            return {}
        return {0: "_trans_a", 1: "_trans_b"}

    @staticmethod
    def _to_gemm(node: Node) -> None:
        """The same product as a Gemm (transposed reads kept), which takes a bias."""
        node.op_type = "Gemm"
        node.attrs = {"alpha": 1.0, "beta": 1.0, "transA": int(node.attrs.get("_trans_a", 0)),
                      "transB": int(node.attrs.get("_trans_b", 0))}

    def fold_scale_shift(self, node: Node, scale, shift, constant: MakeConstant) -> bool:
        """A 2-D float32 product becomes a Gemm so the shift has a bias to go to."""
        a, b = node.inputs[0], node.inputs[1]
        if len(a.shape) != 2 or len(b.shape) != 2 or a.dtype != np.float32 or not float_const(b):
            return False
        self._to_gemm(node)
        lookup("Gemm").fold_scale_shift(node, scale, shift, constant)
        return True

    def take_bias(self, node: Node, bias, out, constant: MakeConstant) -> bool:
        """A float32 product by a 2-D B becomes a Gemm with the bias as C. A 2-D A makes an ONNX Gemm (the bias
        may be anything C broadcasts); an N-D A (a transformer's Linear layer over [batch, tokens,
        features]) makes a Gemm over A's rows flattened (mlcc/ops/gemm.py's internal extension), with a
        bias along the last axis only."""
        a, b, product = node.inputs[0], node.inputs[1], node.outputs[0]
        if (len(b.shape) != 2 or len(a.shape) < 2 or not bias.is_const or out.shape != product.shape
                or any(v.dtype != np.float32 for v in (a, b, bias, out))):
            return False
        if len(a.shape) > 2:  # (with a 2-D A the Add kept the product's shape: the bias has rank 2 at most)
            if node.attrs.get("_trans_a", 0):  # the flattened rows must be A's own rows
                return False
            last = bias.shape[-1] if bias.shape else 1
            if bias.size != last:  # varies along some axis other than the last
                return False
            if len(bias.shape) != 1:
                bias = constant(f"{bias.name}_row", bias.data.reshape(last))
        self._to_gemm(node)
        node.inputs = [node.inputs[0], node.inputs[1], bias]
        return True

    def lower(self, node: Node, ctx) -> None:
        a, b = node.inputs[0], node.inputs[1]
        a_batch, b_batch, out_batch, m, n, k = _matrices(node)
        trans_a, trans_b = node.attrs.get("_trans_a", 0), node.attrs.get("_trans_b", 0)
        if a.dtype != np.float32 and (trans_a or trans_b):
            raise UnsupportedError(f"MatMul reads transposed operands in float32 only, not {a.dtype.name}", node.where())
        if a.dtype != np.float32:
            if a.dtype.kind not in "fiu":
                raise UnsupportedError(f"MatMul on {a.dtype.name} is not supported", node.where())
            ctx.emit("ops/matmul_loops.c.j2", nest=loop_nest(out_batch, [a_batch, b_batch]), a=ctx.ptr(a), b=ctx.ptr(b),
                     c=ctx.ptr(node.outputs[0]), ctype=ctx.c_type(a), m=m, n=n, k=k,
                     a_matrix=m * k, b_matrix=k * n, c_matrix=m * n)
            return
        b_logical = None
        if b.is_const:
            b_logical = b.data.reshape(*b_batch, n, k).swapaxes(-1, -2) if trans_b else b.data.reshape(*b_batch, k, n)
        a_strides = (1, m) if trans_a else (k, 1)
        b_strides = (1, k) if trans_b else (n, 1)
        a_matrices = math.prod(a_batch)
        if math.prod(b_batch) == 1 and (a_matrices == 1 or not trans_a):
            # one B for every matrix of A: A's batch rows stack into one taller product
            emit_gemm(ctx, a_matrices * m, n, k, Operand(a, *a_strides), Operand(b, *b_strides), node.outputs[0],
                      b_logical=None if b_logical is None else b_logical.reshape(k, n),
                      epilogue=node_epilogue(node, self.epilogue_input, n, 1))
            return
        nest = loop_nest(out_batch, [a_batch, b_batch])
        emit_gemm(ctx, m, n, k, Operand(a, *a_strides, m * k), Operand(b, *b_strides, k * n), node.outputs[0],
                  b_logical=b_logical, nest=nest, epilogue=node_epilogue(node, self.epilogue_input, n, 1, m * n))

    def flops(self, node: Node) -> int:
        _, _, out_batch, m, n, k = _matrices(node)
        return 2 * int(np.prod(out_batch, dtype=np.int64)) * m * n * k
