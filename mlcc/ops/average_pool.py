"""AveragePool (opset 1..22): 1-D to 3-D windows with strides, pads, auto_pad, count_include_pad (7+),
ceil_mode (10+) and dilations (19+). Float32 runs on the f32-pool kernel, double as plain loops."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._layout import LayoutAttribute
from ._pool import POOL_ATTRS, geometry, lower_pool, lower_pool_loops, pool_types


@register
class AveragePool(LayoutAttribute, Op):
    op_type = "AveragePool"
    variable_extents = True  # the float kernels take a geometry filled on each run (a strided window: floor division)
    vector_families = ("f32-pool",)
    attrs = {**POOL_ATTRS, "dilations": None, "count_include_pad": 0}
    quantized_form = "average"  # a QuantizedAveragePool between DQ and Q (passes/lower_quantized_islands)

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        include_pad = bool(node.attrs["count_include_pad"])
        if node.inputs[0].dtype == np.float32:
            lower_pool(node, ctx, "mlcc_f32_pool_avg", count_include_pad=include_pad)
        else:
            lower_pool_loops(node, ctx, "avg", count_include_pad=include_pad)

    def flops(self, node: Node) -> int:
        return node.outputs[0].size * (geometry(node).taps + 1)  # an add per tap, then the division
