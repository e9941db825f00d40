"""Hardmax: 1 at the first maximum along an axis, 0 elsewhere. Before opset 13 the input is coerced to 2-D
at `axis` (default 1), as for Softmax; from 13 on it works along the one dim `axis` (default -1). Rendered by
templates/ops/hardmax.c.j2 over the [outer, n, inner] view.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from .softmax import softmax_view

DTYPES = ("float32", "float64")


@register
class Hardmax(Op):
    op_type = "Hardmax"
    attrs = {"axis": None}  # its default depends on the opset

    def infer(self, node: Node):
        x = node.inputs[0]
        return [(x.dtype, x.shape)]

    def flops(self, node: Node) -> int:
        return node.inputs[0].size

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype.name not in DTYPES:
            raise UnsupportedError(f"Hardmax on {x.dtype.name} is not supported yet", node.where())
        if x.size == 0:
            return
        outer, n, inner = softmax_view(node)
        ctx.emit("ops/hardmax.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctx.c_type(x), outer=outer, n=n,
                 inner=inner, block=n * inner)
