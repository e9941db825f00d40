"""LayerNormalization (opset 17): each row of the trailing dims from `axis` on to zero mean and unit
variance, then an elementwise scale and optional bias, on the f32-norm layer kernel. A node that names the
Mean or InvStdDev output (training graphs) is expanded into its ONNX function body instead."""

from __future__ import annotations

from math import prod

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, Role, register
from ._outputs import drop_unread_outputs


@register
class LayerNormalization(Op):
    op_type = "LayerNormalization"
    vector_families = ("f32-norm",)
    variable_extents = True  # rows of the run-time size through mlcc_f32_norm_layer
    role = Role.LAYER_NORMALIZATION
    attrs = {"axis": -1, "epsilon": 1e-5, "stash_type": 1}

    def prefers_function(self, proto, opset: int) -> bool:
        return any(proto.output[1:])

    def lower(self, node: Node, ctx) -> None:
        x, scale, bias = node.inputs[0], node.inputs[1], node.input(2)
        y = node.outputs[0]
        if any(v is not None and v.dtype != np.float32 for v in (x, scale, bias)):
            raise UnsupportedError("LayerNormalization is supported on float32 only", node.where())
        drop_unread_outputs(node, ctx, 1, "LayerNormalization's Mean and InvStdDev")
        rank = len(x.shape)
        axis = node.attrs["axis"]
        if not -rank <= axis < rank:
            raise UnsupportedError(f"axis {axis} is out of range for rank {rank}", node.where())
        axis %= rank
        n = prod(x.shape[axis:])
        for v in (scale, bias):
            if v is not None and v.size != n:
                raise UnsupportedError(f"a {v.name!r} of shape {v.shape} broadcast over the normalised shape "
                                       f"{x.shape[axis:]} is not supported", node.where())
        ctx.use_kernels("f32-norm")
        ctx.emit("ops/layer_normalization.c.j2", kernel=ctx.kernel("mlcc_f32_norm_layer"),
                 rows=prod(x.shape[:axis]), n=n, x=ctx.ptr(x), scale=ctx.ptr(scale),
                 bias=ctx.ptr(bias) if bias is not None else "NULL", epsilon=node.attrs["epsilon"], y=ctx.ptr(y))

    def flops(self, node: Node) -> int:
        return 7 * node.inputs[0].size  # mean 1, variance 3, normalise, scale and bias 3
