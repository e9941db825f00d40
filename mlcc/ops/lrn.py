"""LRN, local response normalisation across channels, on the f32-norm LRN kernel:
y = x * (bias + alpha / size * sum of x^2 over the `size` channels around c)^-beta (ONNX scales alpha by
1/size, unlike some frameworks)."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register


@register
class LRN(Op):
    op_type = "LRN"
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
        batch, channels = x.shape[:2]
        ctx.use_kernels("f32-norm")
        ctx.emit("ops/lrn.c.j2", batch=batch, channels=channels, inner=x.size // max(batch * channels, 1), size=size,
                 alpha_over_size=np.float32(node.attrs["alpha"]) / np.float32(size), beta=node.attrs["beta"],
                 bias=node.attrs["bias"], x=ctx.ptr(x), y=ctx.ptr(y))

    def flops(self, node: Node) -> int:
        return node.inputs[0].size * (2 * int(node.attrs["size"]) + 4)  # window sum of squares, scale, pow, multiply
