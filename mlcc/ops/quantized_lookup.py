"""QuantizedLookup (mlcc domain, made by passes/lower_quantized_islands from DQ -> an elementwise float op ->
Q): an 8-bit tensor mapped element by element through a 256-entry table, y[i] = table[x[i]'s byte]. The table
is the island itself evaluated at build time on each of the 256 input codes: dequantized in float32, the op's
reference (with its other operands, constant scalars), quantized as QuantizeLinear does. So Sigmoid, Tanh,
HardSwish, LeakyRelu, a Mul by a constant, ... run on 8-bit values at one load per element, and the result is
the reference's own float math up to the last ulp of the op's function (onnxruntime's QLinearSigmoid and
QLinearLeakyRelu are table lookups too)."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from .quantized_mat_mul import DOMAIN


@register
class QuantizedLookup(Op):
    op_type = "QuantizedLookup"
    domain = DOMAIN
    elementwise = True  # element i from element i: runs channels-last as its neighbours do
    in_place = True  # reads x[i] before writing y[i]

    def in_place_inputs(self, node: Node) -> list[int]:
        return [0] if node.inputs[0].size == node.outputs[0].size else []

    def channels_last_constant(self, node: Node, data):
        return data  # the table is indexed by value, not by position

    def lower(self, node: Node, ctx) -> None:
        x, table, y = node.inputs[0], node.inputs[1], node.outputs[0]
        ctx.emit("ops/quantized_lookup.c.j2", count=y.size, x=ctx.ptr(x), table=ctx.ptr(table), y=ctx.ptr(y))

    def flops(self, node: Node) -> int:
        return 0  # a load per element

