"""Requantize (mlcc domain, made by passes/lower_quantized_islands): an 8-bit tensor from one scale and zero
point to another, y = clamp(zy + round((x - zx) * sx / sy)), the ratio as a fixed-point multiplier and right
shift (ops/_qs8.fixed_point), rounding as qs8-gemm's requantization does. It lets a Concat whose inputs carry
other scales than its output run on the integers.

Per channel (inputs 1 and 2: int32 multipliers and int64 offsets, shaped to broadcast along the channel axis
as a BatchNormalization's [C, 1, 1] or channels-last [C]): y = clamp(zy + round(((x - zx) * m[c] + o[c]) *
2^-shift)), one shift for all channels: a per-channel affine map between DequantizeLinear and QuantizeLinear
(an unfolded BatchNormalization) on the 8-bit values, rounded once (passes/lower_quantized_islands)."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._broadcast import loop_nest
from .quantized_mat_mul import DOMAIN


@register
class Requantize(Op):
    op_type = "Requantize"
    domain = DOMAIN
    elementwise = True  # element i from element i: runs channels-last as its neighbours do
    in_place = True

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        a = node.attrs
        zero = int(a["x_zero"])
        x_offset = f" - {zero}" if zero > 0 else f" + {-zero}" if zero < 0 else ""
        if node.input(1) is not None:  # per channel
            multiplier, offset, shift = node.inputs[1], node.inputs[2], int(a["shift"])
            ctx.emit("ops/requantize_channels.c.j2", nest=loop_nest(y.shape, [x.shape, multiplier.shape]),
                     x=ctx.ptr(x), y=ctx.ptr(y), y_ctype=ctx.c_type(y), x_offset=x_offset,
                     multiplier=ctx.ptr(multiplier), offset=ctx.ptr(offset), shift=shift,
                     round=2 ** (shift - 1) + 2 ** 62, unbias=2 ** (62 - shift) - int(a["y_zero"]),
                     y_min=int(a["y_min"]), y_max=int(a["y_max"]))
            return
        ctx.emit("ops/requantize.c.j2", count=x.size, x=ctx.ptr(x), y=ctx.ptr(y), x_ctype=ctx.c_type(x),
                 y_ctype=ctx.c_type(y), x_offset=x_offset, multiplier=int(a["multiplier"]),
                 shift=int(a["shift"]), y_zero=int(a["y_zero"]), y_min=int(a["y_min"]), y_max=int(a["y_max"]))

    def flops(self, node: Node) -> int:
        return 0  # integer work, as the copies of the Concat it feeds
