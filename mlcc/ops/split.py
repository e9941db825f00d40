"""Split: each output is copied from its slab of the input along `axis`.

The sizes come from the outputs' inferred shapes, which already reflect every version's form: the `split`
attribute (< 13), the `split` input (13+) and `num_outputs` (18+); ours is only the check that a `split`
input is known at build time.
"""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, emit_regions, normalize_axis, slabs


@register
class Split(Op):
    op_type = "Split"
    variable_extents = True  # slabs of run-time extents (a varying piece's offset is refused by the planner)
    parameter_operands = (1,)
    attrs = {"axis": 0, "split": None, "num_outputs": None}
    view_of_input = True

    def infer(self, node: Node):
        const_ints(node, 1, "split")
        return None

    def view_offsets(self, node: Node) -> list[int] | None:
        """Each output is a contiguous range of the input when every axis before `axis` has size 1."""
        x = node.inputs[0]
        axis = normalize_axis(node.attrs["axis"], len(x.shape), node)
        pieces = slabs(x.shape, axis, [v.shape[axis] for v in node.outputs])
        if any(outer != 1 for outer, _, _, _ in pieces):
            return None
        return [offset * x.dtype.itemsize for _, _, _, offset in pieces]

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        axis = normalize_axis(node.attrs["axis"], len(x.shape), node)
        pieces = slabs(x.shape, axis, [v.shape[axis] for v in node.outputs])
        for v, (outer, row, in_row, offset) in zip(node.outputs, pieces):
            if v.name:  # an omitted output is not written
                emit_regions(ctx, v, x, [(Region([outer, row], [row, 1], [in_row, 1], src_offset=offset), "")])
