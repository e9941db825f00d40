"""QuantizedAdd (mlcc domain, made by passes/lower_quantized_islands from DQ -> Add [-> ReLU / Clip] -> Q): two
8-bit tensors, broadcasting as numpy, each with its scale and zero point, added into an 8-bit one:
y = clamp(zy + round(((a - za) * sa + (b - zb) * sb) / sy)), both ratios sa/sy and sb/sy fixed-point
multipliers over one shared right shift. At ops/_qs8.fixed_point's precision (2^-31 relative) the sum is
exact in int64 and rounded once, half up, as qs8-gemm's requantization (in 32-bit arithmetic where ops/_qs8's
split_sum allows: it vectorises on every SIMD ISA; or, where ops/_qs8.narrow_sum finds one, as one multiply-add
of the raw codes over a shift that gives the same on every pair of codes, half split_sum's work); the activation
is the clamp.
QuantizedBinary is the loop QuantizedMul (ops/quantized_mul) shares."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._broadcast import loop_nest
from ._qs8 import narrow_sum, split_c, split_sum
from .quantized_mat_mul import DOMAIN


def _minus(zero: int) -> str:
    return f" - {zero}" if zero > 0 else f" + {-zero}" if zero < 0 else ""


class QuantizedBinary(Op):
    domain = DOMAIN
    elementwise = True  # element i from elements i (broadcast): runs channels-last as its neighbours do
    in_place = True  # reads a[i] and b[i] before writing y[i] (an operand of the output's size only)

    def combine(self, node: Node) -> str:
        raise NotImplementedError

    def split(self, node: Node) -> dict | None:
        """The sum in 32-bit arithmetic (ops/_qs8.split_sum), where the op has one."""
        return None

    def narrow(self, node: Node) -> dict | None:
        """The requantization as one 32-bit multiply-add of the raw codes (ops/_qs8.narrow_sum), where the op has one."""
        return None

    def lower(self, node: Node, ctx) -> None:
        a, b = node.inputs[0], node.inputs[1]
        y = node.outputs[0]
        at = node.attrs
        shift = int(at["shift"])
        narrow = self.narrow(node)
        ctx.emit("ops/quantized_binary.c.j2", nest=loop_nest(y.shape, [a.shape, b.shape]), a=ctx.ptr(a), b=ctx.ptr(b),
                 y=ctx.ptr(y), y_ctype=ctx.c_type(y), a_offset="" if narrow else _minus(int(at["a_zero"])),
                 b_offset="" if narrow else _minus(int(at["b_zero"])), narrow=narrow,
                 combine=self.combine(node), split=self.split(node), shift=shift, round=2 ** (shift - 1) + 2 ** 62,
                 unbias=2 ** (62 - shift) - int(at["y_zero"]), y_min=int(at["y_min"]), y_max=int(at["y_max"]))

    def flops(self, node: Node) -> int:
        return 0  # integer work


@register
class QuantizedAdd(QuantizedBinary):
    op_type = "QuantizedAdd"

    def combine(self, node: Node) -> str:
        return f"(int64_t)a * {int(node.attrs['a_multiplier'])} + (int64_t)b * {int(node.attrs['b_multiplier'])}"

    def narrow(self, node: Node) -> dict | None:
        a = node.attrs
        found = narrow_sum([node.inputs[0].dtype, node.inputs[1].dtype], [int(a["a_zero"]), int(a["b_zero"])],
                           [int(a["a_multiplier"]), int(a["b_multiplier"])], int(a["shift"]), int(a["y_zero"]),
                           int(a["y_min"]), int(a["y_max"]))
        if found is None:
            return None
        (ma, mb), o, s = found
        return {"value": f"(int32_t)((uint32_t)(a * {ma} + b * {mb} + {o + 2**30}) >> {s}) - {2 ** (30 - s)}"}

    def split(self, node: Node) -> dict | None:
        a = node.attrs
        plan = split_sum([int(a["a_multiplier"]), int(a["b_multiplier"])], 0, int(a["shift"]))
        if plan is None:
            return None
        return split_c(plan, ["a", "b"], [str(int(v)) for v in plan["high"]], [str(int(v)) for v in plan["low"]],
                       str(int(plan["high_offset"])), str(int(plan["low_offset"])), int(a["y_zero"]))

