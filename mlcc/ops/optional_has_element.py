"""OptionalHasElement on a plain tensor or an omitted input: mlcc has no optional types, so whether the
element is there is known at build time (true for a tensor, false for an omitted input) and the node folds
to a constant. Optional- and sequence-typed values never reach it: the frontend refuses them first."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register


@register
class OptionalHasElement(Op):
    op_type = "OptionalHasElement"
    always_folded = True  # the answer depends on the graph's structure only

    def infer(self, node: Node):
        return [(np.dtype(bool), ())]

    def reference(self, node: Node, inputs):
        return [np.array(node.input(0) is not None)]
