"""Compress: the slices of the input along `axis` (of the flattened input when no axis) whose condition is
true. The condition decides the output shape, so it must be known at build time; the data may come at run
time. Each run of consecutive selected slices is one copy region."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, emit_regions, normalize_axis


@register
class Compress(Op):
    op_type = "Compress"
    attrs = {"axis": None}
    float16_native = True  # moves bits only
    shape_operands = (1,)  # the condition: needed at build time (infer asks for it)

    def selection(self, node: Node) -> tuple[list[int], int, int, int]:
        """(selected slice indices, outer, axis length, inner) over the input seen as (outer, axis, inner)."""
        x = node.inputs[0]
        condition = const_ints(node, 1, "condition")
        if node.attrs.get("axis") is None:
            outer, dim, inner = 1, x.size, 1
        else:
            axis = normalize_axis(int(node.attrs["axis"]), len(x.shape), node)
            outer = int(np.prod(x.shape[:axis], dtype=np.int64))
            dim, inner = int(x.shape[axis]), int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        if len(condition) > dim:
            raise ShapeError(f"the condition has {len(condition)} values for an axis of {dim}", node.where())
        return [i for i, c in enumerate(condition) if c], outer, dim, inner

    def infer(self, node: Node):
        x = node.inputs[0]
        selected, _, _, _ = self.selection(node)
        if node.attrs.get("axis") is None:
            return [(x.dtype, (len(selected),))]
        shape = list(x.shape)
        shape[normalize_axis(int(node.attrs["axis"]), len(shape), node)] = len(selected)
        return [(x.dtype, tuple(shape))]

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        selected, outer, dim, inner = self.selection(node)
        count, regions, done = len(selected), [], 0
        while done < count:
            first, length = selected[done], 1
            while done + length < count and selected[done + length] == first + length:
                length += 1
            regions.append((Region([outer, length, inner], [count * inner, inner, 1], [dim * inner, inner, 1],
                                   dst_offset=done * inner, src_offset=first * inner), ""))
            done += length
        emit_regions(ctx, out, x, regions)
