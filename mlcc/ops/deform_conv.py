"""DeformConv (opset 19+), 2-D: a convolution whose every kernel tap reads X at its regular position plus a
learned (dh, dw) offset per output pixel, bilinearly sampled (zero outside the image) and optionally scaled
by a mask; input channels share offsets in `offset_group` groups, and `group` splits the convolution as Conv.

Offsets are run-time data, so the C (templates/ops/deform_conv.c.j2) first samples the columns matrix
(in_channels * kh * kw rows of out_h * out_w) into scratch, then multiplies each group's weights with it.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import fill_literal
from ._spatial import spatial_ints


@register
class DeformConv(Op):
    op_type = "DeformConv"
    attrs = {"dilations": None, "group": 1, "kernel_shape": None, "offset_group": 1, "pads": None, "strides": None}

    def geometry(self, node: Node) -> dict:
        x, w, offset = node.inputs[:3]
        if len(x.shape) != 4:
            raise UnsupportedError(f"DeformConv over {len(x.shape) - 2} spatial dims (2 supported)", node.where())
        n, ic, ih, iw = x.shape
        oc, icg, kh, kw = w.shape
        group, offset_group = int(node.attrs["group"]), int(node.attrs["offset_group"])
        if node.attrs.get("kernel_shape") and list(node.attrs["kernel_shape"]) != [kh, kw]:
            raise ShapeError(f"kernel_shape {node.attrs['kernel_shape']} differs from W's {w.shape[2:]}", node.where())
        sh, sw = spatial_ints(node, "strides", 2, 1)
        dh, dw = spatial_ints(node, "dilations", 2, 1)
        pads = spatial_ints(node, "pads", 4, 0)
        oh = (ih + pads[0] + pads[2] - (kh - 1) * dh - 1) // sh + 1
        ow = (iw + pads[1] + pads[3] - (kw - 1) * dw - 1) // sw + 1
        if (group < 1 or offset_group < 1 or ic != icg * group or oc % group or ic % offset_group
                or tuple(offset.shape) != (n, offset_group * kh * kw * 2, oh, ow)):
            raise ShapeError(f"X {x.shape}, W {w.shape}, offset {offset.shape} do not fit group {group}, "
                             f"offset_group {offset_group} and an output of {oh} x {ow}", node.where())
        mask = node.input(4)
        if mask is not None and tuple(mask.shape) != (n, offset_group * kh * kw, oh, ow):
            raise ShapeError(f"mask {mask.shape} does not fit offset {offset.shape}", node.where())
        return dict(batch=n, in_channels=ic, in_h=ih, in_w=iw, out_channels=oc, kh=kh, kw=kw, out_h=oh, out_w=ow,
                    stride_h=sh, stride_w=sw, dilation_h=dh, dilation_w=dw, pad_h=pads[0], pad_w=pads[1],
                    group_channels=ic // offset_group, out_per_group=oc // group)

    def infer(self, node: Node):
        g = self.geometry(node)
        return [(node.inputs[0].dtype, (g["batch"], g["out_channels"], g["out_h"], g["out_w"]))]

    def flops(self, node: Node) -> int:
        w = node.inputs[1]
        return 2 * node.outputs[0].size * int(np.prod(w.shape[1:]))

    def lower(self, node: Node, ctx) -> None:
        x, w, offset = node.inputs[:3]
        bias, mask, y = node.input(3), node.input(4), node.outputs[0]
        if x.dtype.kind != "f":
            raise UnsupportedError(f"DeformConv of {x.dtype.name}", node.where())
        if y.size == 0:
            return
        g = self.geometry(node)
        taps = g["kh"] * g["kw"]
        out_plane = g["out_h"] * g["out_w"]
        rows = g["in_channels"] * taps
        suffix = "f" if x.dtype == np.float32 else ""
        ctx.emit("ops/deform_conv.c.j2", **g, x=ctx.ptr(x), w=ctx.ptr(w), offsets=ctx.ptr(offset),
                 bias=ctx.ptr(bias) if bias is not None else None, mask=ctx.ptr(mask) if mask is not None else None,
                 y=ctx.ptr(y), ctype=ctx.c_type(x), taps=taps, out_plane=out_plane, plane=g["in_h"] * g["in_w"],
                 group_rows=w.shape[1] * taps, columns=ctx.scratch(rows * out_plane * x.dtype.itemsize, "columns", x.dtype),
                 x_block=int(np.prod(x.shape[1:])), offset_block=int(np.prod(offset.shape[1:])),
                 mask_block=int(np.prod(mask.shape[1:])) if mask is not None else 0,
                 floor=f"floor{suffix}", zero=fill_literal(0, x.dtype), one=fill_literal(1, x.dtype),
                 minus_one=fill_literal(-1, x.dtype), height=fill_literal(g["in_h"], x.dtype),
                 width=fill_literal(g["in_w"], x.dtype))
