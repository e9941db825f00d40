"""QuantizedAdd (mlcc domain, made by passes/lower_quantized_islands from DQ -> Add [-> ReLU / Clip] -> Q):
two 8-bit tensors of one shape, each with its scale and zero point, added into an 8-bit one:
y = clamp(zy + round(((a - za) * sa + (b - zb) * sb) / sy)). Both ratios sa/sy and sb/sy are fixed-point
multipliers over one shared right shift (ops/_qs8.fixed_point's precision, 2^-31 relative), so the sum is
exact in int64 and rounded once, half up, as qs8-gemm's requantization; the activation is the clamp."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from .quantized_mat_mul import DOMAIN


def _minus(zero: int) -> str:
    return f" - {zero}" if zero > 0 else f" + {-zero}" if zero < 0 else ""


@register
class QuantizedAdd(Op):
    op_type = "QuantizedAdd"
    domain = DOMAIN
    elementwise = True  # element i from elements i: runs channels-last as its neighbours do
    in_place = True  # reads a[i] and b[i] before writing y[i]

    def lower(self, node: Node, ctx) -> None:
        a, b = node.inputs[0], node.inputs[1]
        y = node.outputs[0]
        at = node.attrs
        shift = int(at["shift"])
        ctx.emit("ops/quantized_add.c.j2", count=y.size, a=ctx.ptr(a), b=ctx.ptr(b), y=ctx.ptr(y), y_ctype=ctx.c_type(y),
                 a_offset=_minus(int(at["a_zero"])), b_offset=_minus(int(at["b_zero"])),
                 a_multiplier=int(at["a_multiplier"]), b_multiplier=int(at["b_multiplier"]), shift=shift,
                 round=2 ** (shift - 1) + 2 ** 62, unbias=2 ** (62 - shift) - int(at["y_zero"]),
                 y_min=int(at["y_min"]), y_max=int(at["y_max"]))

    def flops(self, node: Node) -> int:
        return 0  # integer work
