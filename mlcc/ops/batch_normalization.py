"""BatchNormalization in inference mode (opset 7..15) on the f32-norm channel-affine kernel.

y = (x - mean) / sqrt(var + epsilon) * scale + B is one multiply-add per element once folded into a scale
and a shift per channel. With constant statistics (the usual case) the fold happens here, in float32
numpy, and the two folded tensors replace the four inputs as the node's packed weights; with run-time
statistics a kernel folds them into scratch first. Opset 7's spatial=0 (statistics per activation, shape
C x D1 x ...) is the same map with one "channel" per activation. training_mode=1 (14+) is refused, as is
reading any of the training-only outputs.
"""

from __future__ import annotations

from math import prod

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._outputs import drop_unread_outputs

PACKED_INPUTS = 3  # x, folded scale, folded shift: the node after lowering packed its constants


@register
class BatchNormalization(Op):
    op_type = "BatchNormalization"
    attrs = {"epsilon": 1e-5, "momentum": 0.9, "spatial": 1, "training_mode": 0}

    def infer(self, node: Node):
        if node.attrs.get("training_mode", 0):  # refused before shape inference, which has its own complaints
            raise UnsupportedError("training_mode=1 is not supported (inference only)", node.where())
        return None

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != np.float32:
            raise UnsupportedError(f"BatchNormalization on {x.dtype.name} is not supported yet (float32 only)", node.where())
        drop_unread_outputs(node, ctx, 1, "BatchNormalization's training statistics")
        batch, channels, inner = self._view(node)
        epsilon = np.float32(node.attrs["epsilon"])
        params = node.inputs[1:]
        if len(params) == 4 and all(p is not None and p.is_const for p in params):
            gamma, beta, mean, var = (p.data.astype(np.float32).reshape(-1) for p in params)
            scale = (gamma / np.sqrt(var + epsilon)).astype(np.float32)
            shift = (beta - mean * scale).astype(np.float32)
            node.inputs = [x, Value(f"{node.name}_scale", np.dtype(np.float32), scale.shape, scale),
                           Value(f"{node.name}_shift", np.dtype(np.float32), shift.shape, shift)]
            params = node.inputs[1:]
        ctx.use_kernels("f32-norm")
        if len(params) == PACKED_INPUTS - 1:
            ctx.emit("ops/batch_normalization.c.j2", batch=batch, channels=channels, inner=inner, fold=None,
                     x=ctx.ptr(x), scale=ctx.ptr(params[0]), shift=ctx.ptr(params[1]), y=ctx.ptr(y))
            return
        if any(p is None or p.dtype != np.float32 for p in params):
            raise UnsupportedError("scale, B, mean and var must all be float32 tensors", node.where())
        scale, shift = ctx.scratch(channels * 4, "scale"), ctx.scratch(channels * 4, "shift")
        ctx.emit("ops/batch_normalization.c.j2", batch=batch, channels=channels, inner=inner,
                 fold=dict(zip(("gamma", "beta", "mean", "var"), (ctx.ptr(p) for p in params))), epsilon=epsilon,
                 x=ctx.ptr(x), scale=scale, shift=shift, y=ctx.ptr(y))

    @staticmethod
    def _view(node: Node) -> tuple[int, int, int]:
        """(batch, channels, inner): x as [N, channels, inner] with one scale and shift per channel."""
        x = node.inputs[0]
        if len(x.shape) < 2:
            raise UnsupportedError(f"BatchNormalization needs an input of rank 2 or more, not {len(x.shape)}", node.where())
        channels = node.inputs[1].size
        per_activation = node.opset < 9 and not node.attrs.get("spatial", 1)
        expected = prod(x.shape[1:]) if per_activation else x.shape[1]
        if channels != expected:
            raise UnsupportedError(f"scale has {channels} elements where {expected} are expected", node.where())
        return x.shape[0], channels, x.size // max(x.shape[0] * channels, 1)

    def flops(self, node: Node) -> int:
        return 2 * node.inputs[0].size
