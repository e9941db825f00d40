"""RoiAlign (opsets 10, 16, 22): for each region of interest (x1, y1, x2, y2) of image batch_indices[r], an
output_height x output_width grid of bins, each the average (or max) of sampling_ratio^2 bilinear samples
(or ceil(bin size) per side when sampling_ratio is 0). coordinate_transformation_mode half_pixel shifts the
scaled region by -0.5 pixel; output_half_pixel (the only form before opset 16) does not and makes the
region at least 1 x 1. Regions are run-time data: the C computes every sample's taps once and applies them
to all channels, accumulating per channel in scratch. A batch index out of range gives zeros.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import fill_literal

CAP = 1 << 20  # samples per bin side at most, when sampling_ratio is adaptive


@register
class RoiAlign(Op):
    op_type = "RoiAlign"
    attrs = {"coordinate_transformation_mode": "half_pixel", "mode": "avg", "output_height": 1, "output_width": 1,
             "sampling_ratio": 0, "spatial_scale": 1.0}

    def infer(self, node: Node):
        x, rois, indices = node.inputs[:3]
        if len(x.shape) != 4 or len(rois.shape) != 2 or rois.shape[1] != 4 or tuple(indices.shape) != rois.shape[:1]:
            raise ShapeError(f"X {x.shape}, rois {rois.shape} and batch_indices {indices.shape} do not fit "
                             "(N, C, H, W), (R, 4), (R,)", node.where())
        return [(x.dtype, (rois.shape[0], x.shape[1], int(node.attrs["output_height"]), int(node.attrs["output_width"])))]

    def lower(self, node: Node, ctx) -> None:
        x, rois, indices = node.inputs[:3]
        y = node.outputs[0]
        a = node.attrs
        half_pixel = node.opset >= 16 and a["coordinate_transformation_mode"] == "half_pixel"
        if node.opset >= 16 and a["coordinate_transformation_mode"] not in ("half_pixel", "output_half_pixel"):
            raise UnsupportedError(f"coordinate_transformation_mode {a['coordinate_transformation_mode']!r}", node.where())
        if a["mode"] not in ("avg", "max") or x.dtype.kind != "f":
            raise UnsupportedError(f"mode {a['mode']!r} on {x.dtype.name}", node.where())
        if y.size == 0:
            return
        n, c, h, w = x.shape
        ctype = ctx.c_type(x)

        def lit(v: float) -> str:
            return fill_literal(v, x.dtype)

        suffix = "f" if x.dtype == np.float32 else ""
        ctx.emit("ops/roi_align.c.j2", x=ctx.ptr(x), rois=ctx.ptr(rois), indices=ctx.ptr(indices), y=ctx.ptr(y),
                 ctype=ctype, rtype=ctx.c_type(rois), acc=ctx.scratch(c * x.dtype.itemsize, "channel_sums", x.dtype),
                 regions=rois.shape[0], batch=n, channels=c, width=w, last_h=h - 1, last_w=w - 1, plane=h * w,
                 x_block=c * h * w,
                 y_block=int(np.prod(y.shape[1:])),
                 out_h=y.shape[2], out_w=y.shape[3], out_plane=y.shape[2] * y.shape[3],
                 scale=lit(a["spatial_scale"]), shift=lit(0.5) if half_pixel else None, half_pixel=half_pixel,
                 ratio=int(a["sampling_ratio"]), max_mode=a["mode"] == "max", lit=dict(
                     zero=lit(0), half=lit(0.5), one=lit(1), minus_one=lit(-1), height=lit(h), width=lit(w),
                     last_h=lit(h - 1), last_w=lit(w - 1), out_h=lit(y.shape[2]), out_w=lit(y.shape[3]),
                     lowest=lit(-np.inf), cap=lit(CAP)),
                 ceil=f"ceil{suffix}", fmax=f"fmax{suffix}")
