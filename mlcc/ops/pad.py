"""Pad: the (possibly cropped, by negative pads) input is copied into the output's interior, then the
borders are written axis by axis: filled with the value (constant), or copied from the output's own
interior (edge: stride 0 from the first/last row; reflect: stride -1 mirrored about it; wrap: from
`kept` elements further in, piece by piece). Axis d's borders cover the full range of axes already done
and the interior of the rest, so every border reads only bytes already written.

Forms: `pads` and `value` attributes before opset 11; from 11 `pads` and an optional `constant_value`
input; an optional `axes` input from 18; mode `wrap` from 19.
"""

from __future__ import annotations

import numpy as np

from ..errors import NeedsConstantError, ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions, fill_literal, is_zero_bytes, normalize_axis

MODES = ("constant", "edge", "reflect", "wrap")


def _chunks(mode: str, before: int, kept: int, after: bool, width: int) -> list[tuple[int, int, int, int]] | None:
    """How to copy one border along its axis: (first output index, count, first source index, source step)
    pieces, in order; None where the mode cannot fill it (reflect wider than the axis less one)."""
    first = before + kept if after else 0
    if kept == 0:
        return None
    if mode == "edge":
        return [(first, width, before + kept - 1 if after else before, 0)]
    if mode == "reflect":
        return [(first, width, before + kept - 2 if after else 2 * before, -1)] if width <= kept - 1 else None
    # wrap: out[i] = out[i -/+ kept], in pieces of at most `kept` moving away from the interior
    pieces = []
    for done in range(0, width, kept):
        count = min(kept, width - done)
        lo = first + done if after else before - done - count
        pieces.append((lo, count, lo - kept if after else lo + kept, 1))
    return pieces


@register
class Pad(Op):
    op_type = "Pad"
    attrs = {"mode": "constant", "pads": None, "value": 0.0}  # pads/value: attributes before opset 11

    def params(self, node: Node) -> tuple[list[int], float, list[int] | None]:
        if node.opset < 11:
            return list(node.attrs.get("pads", [])), node.attrs["value"], None
        value = node.input(2)
        if value is not None and not value.is_const:
            raise NeedsConstantError(f"its constant_value input {value.name!r} is computed at run time; mlcc needs "
                                     "it known at build time", node.where(), value.name)
        fill = np.asarray(value.data).reshape(-1)[0] if value is not None and value.size else 0
        return const_ints(node, 1, "pads"), fill, const_ints(node, 3, "axes")

    def infer(self, node: Node):
        self.params(node)
        return None

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        rank, mode = len(x.shape), node.attrs["mode"]
        if mode not in MODES:
            raise UnsupportedError(f"mode {mode!r}", node.where())
        pads, value, axes = self.params(node)
        axes = list(range(rank)) if axes is None else [normalize_axis(a, rank, node) for a in axes]
        if len(pads) != 2 * len(axes):
            raise ShapeError(f"{len(pads)} pads for {len(axes)} axes", node.where())
        before, after = [0] * rank, [0] * rank
        for i, a in enumerate(axes):
            before[a], after[a] = pads[i], pads[i + len(axes)]
        crop = [max(-b, 0) for b in before]
        kept = [d - max(-b, 0) - max(-a, 0) for d, b, a in zip(x.shape, before, after)]
        pad_lo, pad_hi = [max(b, 0) for b in before], [max(a, 0) for a in after]
        in_strides, out_strides = contiguous_strides(x.shape), contiguous_strides(out.shape)

        def at(index) -> int:
            return sum(i * s for i, s in zip(index, out_strides))

        interior = Region(kept, out_strides, in_strides, dst_offset=at(pad_lo),
                          src_offset=sum(c * s for c, s in zip(crop, in_strides)))
        emit_regions(ctx, out, x, [(interior, "interior")])
        for d in range(rank):
            for is_after, width in ((False, pad_lo[d]), (True, pad_hi[d])):
                if width == 0:
                    continue
                start = [0 if e < d else pad_lo[e] for e in range(rank)]
                extents = [out.shape[e] if e < d else kept[e] for e in range(rank)]
                start[d], extents[d] = (pad_lo[d] + kept[d] if is_after else 0), width
                side = f"axis {d} {'end' if is_after else 'start'}"
                if mode == "constant":
                    emit_regions(ctx, out, None, [(Region(extents, out_strides, dst_offset=at(start)), side)],
                                 fill=fill_literal(value, out.dtype), fill_is_zero=is_zero_bytes(value, out.dtype))
                    continue
                pieces = _chunks(mode, pad_lo[d], kept[d], is_after, width)
                if pieces is None:
                    raise UnsupportedError(f"{mode} padding of {width} on an axis of {kept[d]} elements",
                                           node.where())
                for lo, count, src_lo, step in pieces:
                    start[d], extents[d] = lo, count
                    src_start = list(start)
                    src_start[d] = src_lo
                    src_strides = list(out_strides)
                    src_strides[d] *= step
                    region = Region(list(extents), out_strides, src_strides, dst_offset=at(start),
                                    src_offset=at(src_start))
                    emit_regions(ctx, out, out, [(region, f"{side}: {mode}")])
