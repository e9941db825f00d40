"""MaxPool (opset 1..22): 1-D to 3-D windows with strides, pads, auto_pad, ceil_mode (10+) and dilations
(10+), on every numeric dtype; the optional Indices output (8+) in either storage_order. Float32 without
Indices runs on the f32-pool kernel, the rest as plain loops."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._layout import LayoutAttribute
from ._outputs import drop_unread_outputs, output_used
from ._pool import POOL_ATTRS, geometry, lower_pool, lower_pool_loops, pool_types


@register
class MaxPool(LayoutAttribute, Op):
    op_type = "MaxPool"
    variable_extents = True  # the float kernels take a geometry filled on each run (a strided window: floor division)
    vector_families = ("f32-pool",)
    attrs = {**POOL_ATTRS, "dilations": None, "storage_order": 0}

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        indices = len(node.outputs) > 1 and output_used(ctx, node.outputs[1])
        if not indices:
            drop_unread_outputs(node, ctx, 1, "MaxPool's Indices output")
        if node.inputs[0].dtype == np.float32 and not indices:
            lower_pool(node, ctx, "mlcc_f32_pool_max")
        else:
            lower_pool_loops(node, ctx, "max", storage_order=int(node.attrs["storage_order"]))

    def flops(self, node: Node) -> int:
        return node.outputs[0].size * geometry(node).taps  # one comparison per tap
