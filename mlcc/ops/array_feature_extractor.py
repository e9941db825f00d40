"""ai.onnx.ml ArrayFeatureExtractor: the columns `indices` (any shape, flattened) picked from the last axis of
X. It is Gather along the last axis and lowers as one (constant indices become a strided copy or a table;
run-time ones are clamped so they never read outside X). As in onnxruntime, a 1-D X gives a [1, n] output."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, lookup, register


@register
class ArrayFeatureExtractor(Op):
    op_type = "ArrayFeatureExtractor"
    domain = "ai.onnx.ml"

    def infer(self, node: Node):
        x, indices = node.inputs[0], node.inputs[1]
        if not x.shape:
            raise UnsupportedError("X must have at least one dimension", node.where())
        if np.dtype(indices.dtype) != np.int64:
            raise UnsupportedError(f"indices must be int64, not {np.dtype(indices.dtype).name}", node.where())
        leading = x.shape[:-1] if len(x.shape) > 1 else (1,)
        return [(x.dtype, (*leading, indices.size))]

    def lower(self, node: Node, ctx) -> None:
        # the output's bytes are those of Gather(X, indices, axis=-1): only its shape's spelling differs
        gather = Node("Gather", node.name, node.inputs, node.outputs, {"axis": -1}, "", 13)
        lookup("Gather").lower(gather, ctx)
