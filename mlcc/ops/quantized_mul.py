"""QuantizedMul (mlcc domain, made by passes/lower_quantized_islands from DQ -> Mul [-> ReLU / Clip] -> Q): two
8-bit tensors, broadcasting as numpy, multiplied into an 8-bit one:
y = clamp(zy + round((a - za) * (b - zb) * sa * sb / sy)), the ratio sa * sb / sy one fixed-point multiplier
and right shift (ops/_qs8.fixed_point); the product of the centred operands is exact in int32 (|.| <= 255^2),
rounded once, half up, as qs8-gemm's requantization; the activation is the clamp. The loop is QuantizedAdd's."""

from __future__ import annotations

from ..ir import Node
from . import register
from .quantized_add import QuantizedBinary


@register
class QuantizedMul(QuantizedBinary):
    op_type = "QuantizedMul"

    def combine(self, node: Node) -> str:
        return f"(int64_t)(a * b) * {int(node.attrs['multiplier'])}"
