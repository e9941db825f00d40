"""ai.onnx.ml Normalizer: each row of X [N, C] (or [C]) divided by its MAX, L1 or L2 norm, as float; as
onnxruntime, a row whose norm is 0 is copied unchanged and L2 is computed as sqrt(x^2 / sum x^2) with x's sign."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._ml import numeric_input

NORMS = {"MAX": "max", "L1": "l1", "L2": "l2"}


@register
class Normalizer(Op):
    op_type = "Normalizer"
    domain = "ai.onnx.ml"
    attrs = {"norm": "MAX"}

    def infer(self, node: Node):
        x = numeric_input(node, 0, "fi")
        if len(x.shape) not in (1, 2):
            raise UnsupportedError(f"X must be [N, C] or [C], not of rank {len(x.shape)}", node.where())
        if node.attrs["norm"] not in NORMS:
            raise UnsupportedError(f"norm {node.attrs['norm']!r} is not MAX, L1 or L2", node.where())
        return [(np.float32, x.shape)]

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        columns = x.shape[-1]
        ctx.emit("ops/normalizer.c.j2", x=ctx.ptr(x), x_type=ctx.c_type(x), y=ctx.ptr(node.outputs[0]),
                 rows=x.size // max(columns, 1), columns=columns, norm=NORMS[node.attrs["norm"]])
