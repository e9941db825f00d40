"""ArgMax and ArgMin: the int64 index of the largest (smallest) element along one axis, the first or, with
select_last_index, the last of equal extremes. Viewed as [outer, count, inner]; a NaN met first stays the
extreme, as in onnxruntime. Rendered by templates/ops/arg_max.c.j2.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register_family

DTYPES = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

# op -> the comparison by which a later element replaces the best so far: (first of equals, last of equals)
TABLE = {
    "ArgMax": (">", ">="),
    "ArgMin": ("<", "<="),
}


class ArgOp(Op):
    better: ClassVar[tuple[str, str]] = (">", ">=")
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
            raise UnsupportedError(f"{self.op_type} on {x.dtype.name} is not supported yet", node.where())
        axis = self.axis(node)
        count = x.shape[axis]
        if count == 0:
            raise UnsupportedError(f"{self.op_type} over an empty axis has no answer", node.where())
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        ctx.emit("ops/arg_max.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctx.c_type(x), outer=outer, count=count,
                 inner=inner, block=count * inner, better=self.better[bool(node.attrs["select_last_index"])])


def _make(op_type: str, better: tuple[str, str]) -> type[Op]:
    return type(op_type, (ArgOp,), {"op_type": op_type, "better": better})


register_family(_make, TABLE)
