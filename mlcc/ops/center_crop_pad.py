"""CenterCropPad: each listed axis is cropped or zero-padded to its new length, centred (an odd difference puts
the extra element at the end). `shape` decides the output shape, so it must be known at build time. One copy
region moves the kept block; padding, if any, is a zero fill first."""

from __future__ import annotations

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions, fill_literal, normalize_axis


@register
class CenterCropPad(Op):
    op_type = "CenterCropPad"
    attrs = {"axes": None}
    float16_native = True  # moves bits only

    def params(self, node: Node) -> list[int]:
        """The output shape."""
        x = node.inputs[0]
        lengths = const_ints(node, 1, "shape")
        rank = len(x.shape)
        axes = [normalize_axis(a, rank, node) for a in node.attrs.get("axes") or range(rank)]
        if len(lengths) != len(axes) or any(n < 0 for n in lengths):
            raise ShapeError(f"shape {lengths} does not give one length per axis {axes}", node.where())
        shape = [int(d) for d in x.shape]
        for axis, n in zip(axes, lengths):
            shape[axis] = n
        return shape

    def infer(self, node: Node):
        return [(node.inputs[0].dtype, self.params(node))]

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        shape = self.params(node)
        kept = [min(a, b) for a, b in zip(x.shape, shape)]
        crop = [(a - k) // 2 for a, k in zip(x.shape, kept)]
        pad = [(b - k) // 2 for b, k in zip(shape, kept)]
        out_strides, x_strides = contiguous_strides(shape), contiguous_strides(x.shape)
        if kept != shape:
            emit_regions(ctx, out, None, [(Region([out.size], [1]), "")], fill=fill_literal(0, out.dtype),
                         fill_is_zero=True)
        region = Region(kept, out_strides, x_strides, dst_offset=sum(p * s for p, s in zip(pad, out_strides)),
                        src_offset=sum(c * s for c, s in zip(crop, x_strides)))
        emit_regions(ctx, out, x, [(region, "the centred block")])
