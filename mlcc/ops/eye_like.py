"""EyeLike: a 2-D output shaped like the input, zero but for ones on diagonal k (above the main one when
k > 0). Only the input's shape matters; dtype defaults to the input's."""

from __future__ import annotations

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import Region, emit_regions, fill_literal


@register
class EyeLike(Op):
    op_type = "EyeLike"
    attrs = {"dtype": None, "k": 0}
    float16_native = True  # moves bits only

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        if len(out.shape) != 2:
            raise ShapeError(f"the input has rank {len(x.shape)}; EyeLike needs rank 2", node.where())
        rows, cols = (int(d) for d in out.shape)
        k = int(node.attrs["k"])
        first = max(0, -k)
        count = max(0, min(rows, cols - k) - first)
        emit_regions(ctx, out, None, [(Region([rows * cols], [1]), "")], fill=fill_literal(0, out.dtype),
                     fill_is_zero=True)
        diagonal = Region([count], [cols + 1], dst_offset=first * cols + first + k)
        emit_regions(ctx, out, None, [(diagonal, f"diagonal {k}")], fill=fill_literal(1, out.dtype))
        if not x.is_const:
            ctx.emit("ops/unused.c.j2", idents=[ctx.ptr(x)], reason="only its shape matters")
