"""Expand: broadcast the input to a shape, a copy whose broadcast dims have input stride 0."""

from __future__ import annotations

from ..cexpr import is_one
from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions
from ._views import View


def broadcast_strides(shape, out_shape) -> list[int]:
    """Element strides of `shape` read as `out_shape` (numpy broadcasting): 0 where it repeats."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    return [0 if is_one(d) else s for d, s in zip(padded, contiguous_strides(padded))]


@register
class Expand(Op):
    op_type = "Expand"
    variable_extents = True  # an affine copy; a run-time dim is never taken for a broadcast one
    parameter_operands = (1,)

    def infer(self, node: Node):
        const_ints(node, 1, "shape")
        return None

    def strided_view(self, node: Node, view: View) -> View | None:
        """Broadcast dims read with stride 0."""
        out = node.outputs[0]
        rank = len(out.shape)
        pad = rank - len(view.shape)
        if pad < 0:
            return None
        shape, strides = (1,) * pad + view.shape, (0,) * pad + view.strides
        new = tuple(0 if d == 1 and o != 1 else s for d, o, s in zip(shape, out.shape, strides))
        return View(view.value, view.offset, tuple(out.shape), new)

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        region = Region(list(out.shape), contiguous_strides(out.shape), broadcast_strides(x.shape, out.shape))
        emit_regions(ctx, out, x, [(region, "")])
