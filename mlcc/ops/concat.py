"""Concat: each input is copied into its slab of the output along `axis`. Where the slabs are contiguous the
memory planner has the producers write straight into them instead, and this copy is not emitted."""

from __future__ import annotations

from ..ir import Node
from . import REQUIRED, Op, register
from ._copy import Region, emit_regions, normalize_axis, slabs


@register
class Concat(Op):
    op_type = "Concat"
    attrs = {"axis": REQUIRED}
    gathers_inputs = True

    def input_offsets(self, node: Node) -> list[int] | None:
        """Each input is a contiguous range of the output when every axis before `axis` has size 1."""
        out = node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(out.shape), node)
        parts = [v for v in node.inputs if v is not None]
        pieces = slabs(out.shape, axis, [v.shape[axis] for v in parts])
        if len(parts) != len(node.inputs) or any(outer != 1 for outer, _, _, _ in pieces):
            return None
        return [offset * out.dtype.itemsize for _, _, _, offset in pieces]

    def lower(self, node: Node, ctx) -> None:
        out = node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(out.shape), node)
        parts = [v for v in node.inputs if v is not None]
        pieces = slabs(out.shape, axis, [v.shape[axis] for v in parts])
        for i, (v, (outer, row, out_row, offset)) in enumerate(zip(parts, pieces)):
            region = Region([outer, row], [out_row, 1], [row, 1], dst_offset=offset)
            emit_regions(ctx, out, v, [(region, f"input {i}")])
