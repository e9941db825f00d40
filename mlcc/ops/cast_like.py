"""CastLike: Cast to the element type of a second input, whose values are never read."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from .cast import lower_cast


@register
class CastLike(Op):
    op_type = "CastLike"
    attrs = {"saturate": 1, "round_mode": "up"}
    elementwise = True
    float16_native = True

    def lower(self, node: Node, ctx) -> None:
        lower_cast(ctx, node.inputs[0], node.outputs[0], [node.inputs[1]])
