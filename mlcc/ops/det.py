"""Det: the determinant of each square matrix in the last two dims, by LU decomposition with partial pivoting
(the product of the pivots, negated per row swap) on a scratch copy. Rendered by templates/ops/det.c.j2.
"""

from __future__ import annotations

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register

DTYPES = ("float32", "float64")


@register
class Det(Op):
    op_type = "Det"

    def infer(self, node: Node):
        x = node.inputs[0]
        if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
            raise ShapeError(f"Det needs square matrices in the last two dims, not shape {list(x.shape)}", node.where())
        return [(x.dtype, x.shape[:-2])]

    def flops(self, node: Node) -> int:
        n = node.inputs[0].shape[-1]
        return node.outputs[0].size * 2 * n ** 3 // 3

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype.name not in DTYPES:
            raise UnsupportedError(f"Det on {x.dtype.name} is not supported yet", node.where())
        if y.size == 0:
            return
        n = int(x.shape[-1])
        ctype = ctx.c_type(x)
        ctx.emit("ops/det.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctype, batch=y.size, n=n, size=n * n,
                 fabs="fabsf" if ctype == "float" else "fabs",
                 lu=ctx.scratch(max(n * n, 1) * x.dtype.itemsize, "lu", x.dtype) if n else "")
