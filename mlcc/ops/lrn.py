"""LRN, local response normalisation across channels, on the f32-lrn kernels:
y = x * (bias + alpha / size * sum of x^2 over the `size` channels around c)^-beta (ONNX scales alpha by
1/size, unlike some frameworks). With attr layout="NHWC" (passes/choose_layout) the channels are the last,
contiguous axis."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register
from ._layout import LayoutAttribute, is_channels_last


@register
class LRN(LayoutAttribute, Op):
    op_type = "LRN"
    vector_families = ("f32-lrn",)
    channels_last_seed = False  # joins a channels-last region, never starts one
    attrs = {"size": REQUIRED, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != np.float32:
            raise UnsupportedError(f"LRN on {x.dtype.name} is not supported yet (float32 only)", node.where())
        if len(x.shape) < 2:
            raise UnsupportedError(f"LRN needs an input of rank 2 or more, not {len(x.shape)}", node.where())
        size = int(node.attrs["size"])
        if size < 1:
            raise UnsupportedError(f"size={size} must be positive", node.where())
        ctx.use_kernels("f32-lrn")
        alpha_over_size = np.float32(node.attrs["alpha"]) / np.float32(size)
        values = dict(size=size, alpha_over_size=alpha_over_size, beta=node.attrs["beta"], bias=node.attrs["bias"],
                      x=ctx.ptr(x), y=ctx.ptr(y))
        if is_channels_last(node):
            channels = x.shape[-1]
            ctx.emit("ops/lrn.c.j2", layout="nhwc", kernel=ctx.kernel("mlcc_f32_lrn_nhwc"),
                     pixels=x.size // max(channels, 1), channels=channels, **values)
            return
        batch, channels = x.shape[:2]
        ctx.emit("ops/lrn.c.j2", layout="nchw", kernel=ctx.kernel("mlcc_f32_lrn_nchw"), batch=batch, channels=channels,
                 inner=x.size // max(batch * channels, 1), **values)

    def flops(self, node: Node) -> int:
        return node.inputs[0].size * (2 * int(node.attrs["size"]) + 4)  # window sum of squares, scale, pow, multiply
