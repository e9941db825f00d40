"""ArgMax: the int64 index of the largest element along one axis (the first or, with select_last_index, the
last of equal maxima). Viewed as [outer, count, inner]; a NaN met first stays the maximum, as in
onnxruntime. Rendered by templates/ops/arg_max.c.j2.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register

DTYPES = ("float32", "float64", "int32", "int64")


@register
class ArgMax(Op):
    op_type = "ArgMax"
    attrs = {"axis": 0, "keepdims": 1, "select_last_index": 0}

    def axis(self, node: Node) -> int:
        rank = len(node.inputs[0].shape)
        axis = int(node.attrs["axis"])
        if not -rank <= axis < rank:
            raise ShapeError(f"axis {axis} is out of range for rank {rank}", node.where())
        return axis % rank

    def infer(self, node: Node):
        shape = list(node.inputs[0].shape)
        axis = self.axis(node)
        if node.attrs["keepdims"]:
            shape[axis] = 1
        else:
            del shape[axis]
        return [(np.dtype("int64"), tuple(shape))]

    def flops(self, node: Node) -> int:
        return node.inputs[0].size

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype.name not in DTYPES:
            raise UnsupportedError(f"ArgMax on {x.dtype.name} is not supported yet", node.where())
        axis = self.axis(node)
        count = x.shape[axis]
        if count == 0:
            raise UnsupportedError("ArgMax over an empty axis has no answer", node.where())
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        ctx.emit("ops/arg_max.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctx.c_type(x), outer=outer, count=count,
                 inner=inner, block=count * inner, better=">=" if node.attrs["select_last_index"] else ">")
