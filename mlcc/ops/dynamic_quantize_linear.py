"""DynamicQuantizeLinear: uint8 quantization of a float32 tensor by its own range, widened to include zero:
scale = (max - min) / 255, zero point = round(-min / scale) saturated, y = saturate(round(x / scale) + zero
point), rounding half to even. An empty range (x all zero) gets scale 1, as in onnxruntime (onnx's reference
gives 1 / 255; folding follows onnxruntime too, so folded and compiled models agree)."""

from __future__ import annotations

import numpy as np

from ..cexpr import is_variable
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register, run_onnx_reference


@register
class DynamicQuantizeLinear(Op):
    op_type = "DynamicQuantizeLinear"
    variable_extents = True  # loops over the run-time count

    def reference(self, node: Node, inputs):
        y, scale, zero = run_onnx_reference(node, inputs)
        if not np.any(inputs[0]):
            scale = np.ones_like(scale)
        return [y, scale, zero]

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        y, scale, zero = node.outputs
        if x.dtype != np.float32:
            raise UnsupportedError(f"DynamicQuantizeLinear of {x.type_str()} (float32 only)", node.where())
        count = x.size
        ctx.emit("ops/dynamic_quantize_linear.c.j2", count=count, x=ctx.ptr(x), y=ctx.ptr(y),
                 scale=ctx.ptr(scale), zero=ctx.ptr(zero), tail=is_variable(count) or count % 16 != 0)

    def flops(self, node: Node) -> int:
        return 4 * node.inputs[0].size
