"""ConstantOfShape: a tensor of the given shape filled with `value` (float32 0 by default).

Its shape input is almost always known at build time, and then the frontend folds it with the numpy
reference (np.full: models fold hundreds of these, some of 100M elements). A shape computed at run time
would make the output's shape value-dependent, which mlcc refuses. The lowering (a fill loop) serves a
node kept on purpose, e.g. to spare the weights blob a huge constant.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import Region, emit_regions, fill_literal, is_zero_bytes


@register
class ConstantOfShape(Op):
    op_type = "ConstantOfShape"
    attrs = {"value": None}
    value_dependent_shape = True
    shape_operands = (0,)

    def fill(self, node: Node) -> np.ndarray:
        value = node.attrs.get("value")
        return np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)[:1]

    def shape(self, node: Node, data) -> tuple[int, ...]:
        shape = tuple(int(d) for d in np.asarray(data).reshape(-1))
        if any(d < 0 for d in shape):
            raise ShapeError(f"negative dimension in shape {shape}", node.where())
        return shape

    def infer(self, node: Node):
        shape = node.inputs[0]
        if not shape.is_const:
            return None  # the frontend reports the value-dependent shape
        return [(self.fill(node).dtype, self.shape(node, shape.data))]

    def reference(self, node: Node, inputs):
        value = self.fill(node)
        return [np.full(self.shape(node, inputs[0]), value[0], dtype=value.dtype)]

    def lower(self, node: Node, ctx) -> None:
        out = node.outputs[0]
        value = self.fill(node)[0]
        emit_regions(ctx, out, None, [(Region([out.size], [1]), "")], fill=fill_literal(value, out.dtype),
                     fill_is_zero=is_zero_bytes(value, out.dtype))
