"""AveragePool (opset 1..22): 1-D to 3-D windows with strides, pads, auto_pad, count_include_pad (7+),
ceil_mode (10+) and dilations (19+)."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._pool import POOL_ATTRS, geometry, lower_pool, pool_types


@register
class AveragePool(Op):
    op_type = "AveragePool"
    attrs = {**POOL_ATTRS, "dilations": None, "count_include_pad": 0}

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        lower_pool(node, ctx, "mlcc_f32_pool_avg__scalar", count_include_pad=bool(node.attrs["count_include_pad"]))

    def flops(self, node: Node) -> int:
        return node.outputs[0].size * (geometry(node).taps + 1)  # an add per tap, then the division
