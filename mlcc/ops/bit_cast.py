"""BitCast: the same bytes read as another element type of the same size: one memcpy (an assignment would
convert the value)."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register


@register
class BitCast(Op):
    op_type = "BitCast"
    attrs = {"to": REQUIRED}
    elementwise = True
    float16_native = True
    inplace_safe = True

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        if x.dtype.itemsize != out.dtype.itemsize:
            raise UnsupportedError(f"BitCast from {x.dtype} to {out.dtype}: the sizes differ", node.where())
        ctx.emit("ops/bit_cast.c.j2", x=ctx.ptr(x), y=ctx.ptr(out), nbytes=out.nbytes)
