"""MaxPool (opset 1..22): 1-D to 3-D windows with strides, pads, auto_pad, ceil_mode (10+) and dilations
(10+). The optional Indices output (8+) is not implemented: a model that reads it is refused."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._outputs import drop_unread_outputs
from ._pool import POOL_ATTRS, geometry, lower_pool, pool_types


@register
class MaxPool(Op):
    op_type = "MaxPool"
    attrs = {**POOL_ATTRS, "dilations": None, "storage_order": 0}

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        drop_unread_outputs(node, ctx, 1, "MaxPool's Indices output")
        lower_pool(node, ctx, "mlcc_f32_pool_max__scalar")

    def flops(self, node: Node) -> int:
        return node.outputs[0].size * geometry(node).taps  # one comparison per tap
