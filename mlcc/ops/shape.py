"""Shape: the input's shape as int64, sliced by start/end (opset 15). Always known at build time."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register


@register
class Shape(Op):
    op_type = "Shape"
    attrs = {"start": 0, "end": None}
    always_folded = True

    def dims(self, node: Node) -> np.ndarray:
        shape = node.inputs[0].shape
        end = node.attrs.get("end", len(shape))
        return np.array(shape[node.attrs["start"]:end], dtype=np.int64)  # ONNX clamps as Python slicing does

    def infer(self, node: Node):
        return [(np.dtype(np.int64), self.dims(node).shape)]

    def reference(self, node: Node, inputs):
        return [self.dims(node)]
