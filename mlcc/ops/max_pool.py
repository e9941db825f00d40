"""MaxPool (opset 1..22): 1-D to 3-D windows with strides, pads, auto_pad, ceil_mode (10+) and dilations
(10+), on every numeric dtype; the optional Indices output (8+) in either storage_order. Float32 without
Indices runs on the f32-pool kernel, the rest as plain loops. Between a DequantizeLinear and a QuantizeLinear
it runs on the 8-bit values (passes/lower_quantized_islands; a Requantize follows where the two differ),
channels-last where the target's int8 convolutions are."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._layout import LayoutAttribute, float_activations
from ._outputs import drop_unread_outputs, output_used
from ._pool import POOL_ATTRS, geometry, lower_pool, lower_pool_loops, pool_types
from ._qs8 import runs_channels_last as qs8_runs_channels_last

EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))


@register
class MaxPool(LayoutAttribute, Op):
    op_type = "MaxPool"
    variable_extents = True  # the float kernels take a geometry filled on each run (a strided window: floor division)
    vector_families = ("f32-pool",)
    attrs = {**POOL_ATTRS, "dilations": None, "storage_order": 0}
    quantized_form = "monotonic"  # the max of the 8-bit values is the 8-bit value of the max

    def runs_channels_last(self, node: Node) -> bool:
        x = node.inputs[0]
        eight_bit = x.dtype in EIGHT_BIT and node.outputs[0].dtype == x.dtype
        return ((float_activations(self, node) or eight_bit) and len(node.outputs) == 1 and len(x.shape) == 4
                and not x.is_const)

    def runs_channels_last_on(self, node: Node, target) -> bool:
        """8-bit: in the layout the target's int8 convolutions use, so an int8 region needs no transposes."""
        return node.inputs[0].dtype not in EIGHT_BIT or qs8_runs_channels_last(target)

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
