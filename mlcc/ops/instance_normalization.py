"""InstanceNormalization: each (n, c) plane to zero mean and unit variance, then a per-channel scale and
bias, on the f32-norm instance kernel."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register


@register
class InstanceNormalization(Op):
    op_type = "InstanceNormalization"
    attrs = {"epsilon": 1e-5}

    def lower(self, node: Node, ctx) -> None:
        x, scale, bias = node.inputs[:3]
        y = node.outputs[0]
        if any(v.dtype != np.float32 for v in (x, scale, bias)):
            raise UnsupportedError("InstanceNormalization is supported on float32 only", node.where())
        if len(x.shape) < 3 or scale.size != x.shape[1] or bias.size != x.shape[1]:
            raise UnsupportedError(f"expects x of shape N x C x D1 ... with C scales and biases, got x {x.shape}, "
                                   f"scale {scale.shape}, B {bias.shape}", node.where())
        batch, channels = x.shape[:2]
        ctx.emit("ops/instance_normalization.c.j2", kernel=ctx.kernel("mlcc_f32_norm_instance"), batch=batch, channels=channels,
                 inner=x.size // (batch * channels), x=ctx.ptr(x), scale=ctx.ptr(scale), bias=ctx.ptr(bias),
                 epsilon=node.attrs["epsilon"], y=ctx.ptr(y))

    def flops(self, node: Node) -> int:
        return 6 * node.inputs[0].size  # mean 1, variance 3, multiply-add 2
