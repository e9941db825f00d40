"""QuantizedSoftmax (mlcc domain, made by passes/lower_quantized_islands from DQ -> Softmax -> Q along contiguous
rows): an 8-bit tensor's rows normalised into an 8-bit one without a float copy of either in the arena. Per
row: the largest code m; e_j = exp((x_j - m) * sx), read from a 256-entry float table by the difference m - x_j
(built at build time in float32); their float32 sum; y_j = clamp(zy + rint(e_j / sum / sy)), the two divisions
and the rounding as the reference's Softmax then QuantizeLinear do (onnxruntime computes exp(x_j - max) of
the dequantized floats: within an ulp of the table's entry, so a rounding at .5 may go the other way)."""

from __future__ import annotations

from ..cnames import float_literal
from ..ir import Node
from . import Op, register
from .quantized_mat_mul import DOMAIN


@register
class QuantizedSoftmax(Op):
    op_type = "QuantizedSoftmax"
    domain = DOMAIN

    def lower(self, node: Node, ctx) -> None:
        x, table, y = node.inputs[0], node.inputs[1], node.outputs[0]
        a = node.attrs
        ctx.emit("ops/quantized_softmax.c.j2", rows=int(a["rows"]), n=int(a["n"]), x=ctx.ptr(x), table=ctx.ptr(table),
                 y=ctx.ptr(y), x_ctype=ctx.c_type(x), y_ctype=ctx.c_type(y), y_scale=float_literal(float(a["y_scale"])),
                 y_zero=float_literal(float(a["y_zero"])), y_min=float_literal(float(a["y_min"])),
                 y_max=float_literal(float(a["y_max"])))

    def flops(self, node: Node) -> int:
        return 3 * node.outputs[0].size  # an add, then two divisions per element
