"""DequantizeLinear: y = (x - zero_point) * scale in float, per tensor, per axis or per block (see _quant).
Int32 inputs take no zero point. Float8 and 4-bit inputs are not supported.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._quant import quant_range
from .quantize_linear import emit_quant


@register
class DequantizeLinear(Op):
    op_type = "DequantizeLinear"
    attrs = {"axis": 1, "block_size": 0, "output_dtype": 0}

    def lower(self, node: Node, ctx) -> None:
        x, scale, zero = node.inputs[0], node.inputs[1], node.input(2)
        y = node.outputs[0]
        quant_range(x.dtype, node)
        if scale.dtype != np.float32 or y.dtype not in (np.float32, np.float64):
            raise UnsupportedError(f"DequantizeLinear by {scale.type_str()} to {y.dtype.name} (float32 scales)", node.where())
        value = "((float)x - (float)z) * s" if zero is not None else "(float)x * s"
        emit_quant(node, ctx, value, scale, zero)
