"""An 8-bit product by constant weights and the float scaling after it -> one PackedIntegerMatMul.

A dynamically quantized model (onnxruntime.quantization.quantize_dynamic; com.microsoft DynamicQuantizeMatMul,
which the frontend imports as the same nodes) computes each Linear layer as

    DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q, x_zero, W_zero) -> Cast(float) -> Mul(x_scale * W_scale)
    -> Add(bias)

The product (an op whose `packed_integer_product` answers: constant weights that fit int8 less their zero point)
becomes a PackedIntegerMatMul on weights packed at build time, taking with it the Cast to float32 that reads
it alone, then a Mul by a factor of one value or one per output column, then an Add of a constant per-column
bias, each only where the one before was taken and its output is read by the next alone. The fused step rounds
as the graph does (Cast, then Mul, then Add), so its output is bit-identical; a second Mul stays a node of its
own. The int32 product and its float copy leave the arena. DynamicQuantizeLinear and the scales' Mul stay as
they are (one quantization feeds several products: attention's Q, K and V). Runs after fold_constants (the
weights and zero points are constants by then).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ..ops.packed_integer_mat_mul import PackedIntegerMatMul
from ._rewrite import Rewriter, channel_vector

FLOAT = np.dtype(np.float32)


def _per_column(value: Value, shape: tuple[int, ...]) -> bool:
    """Does `value` broadcast against `shape` as one value, or one per last-axis index, without widening it?"""
    if len(value.shape) > len(shape):
        return False
    padded = (1,) * (len(shape) - len(value.shape)) + tuple(value.shape)
    return all(d == 1 for d in padded[:-1]) and padded[-1] in (1, shape[-1]) if shape else value.size == 1


def _other(node: Node, value: Value) -> Value | None:
    """The operand of a two-input node besides `value` (None if it reads `value` twice or has another arity)."""
    if len(node.inputs) != 2 or node.inputs[0] is node.inputs[1]:
        return None
    return node.inputs[1] if node.inputs[0] is value else node.inputs[0]


def _scaling(rw: Rewriter, out: Value) -> tuple[list[Node], Value | None, Value | None, Value]:
    """The Cast [-> Mul [-> Add]] after the product's output `out`: (nodes, scale, bias constant, last output)."""
    chain, scale, bias = [], None, None
    cast = rw.sole_reader(out)
    if cast is None or not ops.has_role(cast, Role.CAST) or cast.outputs[0].dtype != FLOAT:
        return chain, scale, bias, out
    chain.append(cast)
    out = cast.outputs[0]
    step = rw.sole_reader(out)
    if step is not None and ops.has_role(step, Role.MUL):
        factor = _other(step, out)
        if (factor is not None and factor.dtype == FLOAT and _per_column(factor, out.shape)
                and step.outputs[0].shape == out.shape):
            chain.append(step)
            scale, out = factor, step.outputs[0]
            step = rw.sole_reader(out)
    if step is not None and ops.has_role(step, Role.ADD):
        addend = _other(step, out)
        if (addend is not None and addend.is_const and addend.dtype == FLOAT and out.shape
                and _per_column(addend, out.shape) and step.outputs[0].shape == out.shape):
            column = channel_vector(addend, out.shape, len(out.shape) - 1).astype(np.float32)  # float32 values: exact
            chain.append(step)
            bias, out = rw.constant(f"{addend.name}_columns", column), step.outputs[0]
    return chain, scale, bias, out


def run(graph: Graph) -> dict:
    rw = Rewriter(graph)
    fused = scaled = biased = 0
    for node in list(graph.nodes):
        op = ops.of(node)
        product = op.packed_integer_product(node) if op is not None else None
        if product is None:
            continue
        a, w, a_zero = product
        chain, scale, bias, out = _scaling(rw, node.outputs[0])
        weights = rw.constant(f"{node.name}_weights", w)
        fusedname = rw.fresh(f"{node.name}_packed")
        new = Node(PackedIntegerMatMul.op_type, fusedname, [a, weights, a_zero, scale, bias], [out],
                   {"a_flip": 128 if a.dtype == np.uint8 else 0}, PackedIntegerMatMul.domain, 1)
        rw.swap([node, *chain], new)
        fused += 1
        scaled += scale is not None
        biased += bias is not None
    return {"fused": fused, "scaled": scaled, "biased": biased}
