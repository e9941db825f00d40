"""DequantizeLinear: y = (x - zero_point) * scale in float, per tensor, per axis or per block (see _quant).
Int32 inputs take no zero point. Float8 and 4-bit inputs are not supported.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._quant import PerTensorChannelsLast, broadcast_param, quant_axis, quant_range
from .quantize_linear import emit_quant


@register
class DequantizeLinear(PerTensorChannelsLast, Op):
    op_type = "DequantizeLinear"
    quantization = "dequantize"
    attrs = {"axis": 1, "block_size": 0, "output_dtype": 0}

    def reference(self, node: Node, inputs):
        """numpy, so folding works at every opset (onnx.reference implements only the newest versions)."""
        x, scale = inputs[0], inputs[1]
        zero = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
        axis, block_size = quant_axis(node)
        s = broadcast_param(scale, x.shape, axis, block_size)
        shifted = x.astype(np.float32)  # as onnxruntime: (float)x, then times the scale in float
        if zero is not None:
            shifted = shifted - broadcast_param(zero, x.shape, axis, block_size).astype(shifted.dtype)
        return [(shifted * s.astype(np.float32)).astype(scale.dtype)]

    def tail_inputs(self, node: Node) -> list[int]:
        """quantize.c.j2 runs through x in increasing index, reading x[i] before writing y[i], except in blocks
        (one nest per run of whole blocks and one for the rest)."""
        x, y = node.inputs[0], node.outputs[0]
        if quant_axis(node)[1] > 0 or x.size != y.size or y.dtype.itemsize < x.dtype.itemsize:
            return []
        return [0]

    def lower(self, node: Node, ctx) -> None:
        x, scale, zero = node.inputs[0], node.inputs[1], node.input(2)
        y = node.outputs[0]
        quant_range(x.dtype, node)
        if scale.dtype != np.float32 or y.dtype not in (np.float32, np.float64):
            raise UnsupportedError(f"DequantizeLinear by {scale.type_str()} to {y.dtype.name} (float32 scales)", node.where())
        value = "((float)x - (float)z) * s" if zero is not None else "(float)x * s"
        emit_quant(node, ctx, value, scale, zero)
