"""Tile: the output seen as (repeat0, dim0, repeat1, dim1, ...) is a copy reading the input with stride 0
along each repeat axis."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions


@register
class Tile(Op):
    op_type = "Tile"

    def infer(self, node: Node):
        const_ints(node, 1, "repeats")
        return None

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        repeats = const_ints(node, 1, "repeats")
        extents, src = [], []
        for r, d, s in zip(repeats, x.shape, contiguous_strides(x.shape)):
            extents += [r, d]
            src += [0, s]
        emit_regions(ctx, node.outputs[0], x, [(Region(extents, contiguous_strides(extents), src), "")])
