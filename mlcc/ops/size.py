"""Size: the input's element count as an int64 scalar. Always known at build time."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register


@register
class Size(Op):
    op_type = "Size"
    always_folded = True

    def infer(self, node: Node):
        return [(np.dtype(np.int64), ())]

    def reference(self, node: Node, inputs):
        return [np.array(node.inputs[0].size, dtype=np.int64)]
