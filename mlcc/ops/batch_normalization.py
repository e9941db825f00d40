"""BatchNormalization on the f32-norm channel-affine kernel, in inference (opset 7..15) and training mode (14+).

y = (x - mean) / sqrt(var + epsilon) * scale + B is one multiply-add per element once folded into a scale
and a shift per channel. With constant statistics (the usual case) the fold happens here, in float32
numpy, and the two folded tensors replace the four inputs as the node's packed weights; with run-time
statistics a kernel folds them into scratch first. Opset 7's spatial=0 (statistics per activation, shape
C x D1 x ...) is the same map with one "channel" per activation.

training_mode=1 normalises with the batch's own statistics instead (per channel over the batch and spatial
positions; the variance is the population one, as onnx's reference), computed in C before the same fold,
and writes the optional running_mean / running_var outputs: input * momentum + batch * (1 - momentum).
Reading opset 7/9's training-only outputs (saved statistics) is refused.
"""

from __future__ import annotations

from math import prod

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._outputs import drop_unread_outputs, output_used

PACKED_INPUTS = 3  # x, folded scale, folded shift: the node after lowering packed its constants
RUNNING_OUTPUTS = 3  # training mode: y, running_mean, running_var


@register
class BatchNormalization(Op):
    op_type = "BatchNormalization"
    attrs = {"epsilon": 1e-5, "momentum": 0.9, "spatial": 1, "training_mode": 0}
    quantized_form = "affine"  # between DQ and Q: a per-channel Requantize (passes/lower_quantized_islands)

    def channel_affine(self, node: Node) -> tuple[np.ndarray, np.ndarray, bool] | None:
        x, params = node.inputs[0], node.inputs[1:5]
        if len(params) != 4 or any(p is None or not p.is_const for p in params) or len(x.shape) < 2:
            return None
        per_activation = node.opset < 9 and not node.attrs.get("spatial", 1)  # opset 7's spatial=0
        channels = int(np.prod(x.shape[1:])) if per_activation else x.shape[1]
        if not all(p.size == channels for p in params) or x.dtype.kind != "f" or node.attrs.get("training_mode", 0):
            return None
        gamma, beta, mean, var = (p.data.astype(np.float64).reshape(-1) for p in params)
        scale = gamma / np.sqrt(var + np.float64(np.float32(node.attrs["epsilon"])))
        return scale, beta - mean * scale, per_activation

    def infer(self, node: Node):
        if len(node.outputs) == 1:
            return None
        # onnx's inference wants all three outputs in training mode (the running statistics are optional) and
        # leaves opset 7/9's statistics outputs unshaped
        x, mean = node.inputs[0], node.input(3)
        stats = (mean.dtype, mean.shape) if mean is not None else (x.dtype, x.shape[1:2])
        return [(x.dtype, x.shape), *[stats] * (len(node.outputs) - 1)]

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype != np.float32:
            raise UnsupportedError(f"BatchNormalization on {x.dtype.name} is not supported yet (float32 only)", node.where())
        training = bool(node.attrs.get("training_mode", 0))
        if training:
            drop_unread_outputs(node, ctx, RUNNING_OUTPUTS, "BatchNormalization's outputs past running_var")
        else:
            drop_unread_outputs(node, ctx, 1, "BatchNormalization's training statistics")
        batch, channels, inner = self._view(node)
        epsilon = np.float32(node.attrs["epsilon"])
        params = node.inputs[1:]
        if len(params) == 4 and all(p.is_const for p in params) and not training:
            gamma, beta, mean, var = (p.data.astype(np.float32).reshape(-1) for p in params)
            scale = (gamma / np.sqrt(var + epsilon)).astype(np.float32)
            shift = (beta - mean * scale).astype(np.float32)
            node.inputs = [x, Value(f"{node.name}_scale", np.dtype(np.float32), scale.shape, scale),
                           Value(f"{node.name}_shift", np.dtype(np.float32), shift.shape, shift)]
            params = node.inputs[1:]
        if len(params) == PACKED_INPUTS - 1:
            ctx.emit("ops/batch_normalization.c.j2", batch=batch, channels=channels, inner=inner, fold=None, stats=None,
                     kernel=ctx.kernel("mlcc_f32_norm_channel_affine"), x=ctx.ptr(x), scale=ctx.ptr(params[0]),
                     shift=ctx.ptr(params[1]), y=ctx.ptr(y))
            return
        if any(p is None or p.dtype != np.float32 for p in params):
            raise UnsupportedError("scale, B, mean and var must all be float32 tensors", node.where())
        if training:
            self._lower_training(node, ctx, batch, channels, inner, epsilon)
            return
        scale, shift = ctx.scratch(channels * 4, "scale"), ctx.scratch(channels * 4, "shift")
        ctx.emit("ops/batch_normalization.c.j2", batch=batch, channels=channels, inner=inner, stats=None,
                 fold=dict(zip(("gamma", "beta", "mean", "var"), (ctx.ptr(p) for p in params)),
                           kernel=ctx.kernel("mlcc_f32_norm_batch_fold")),
                 epsilon=epsilon, kernel=ctx.kernel("mlcc_f32_norm_channel_affine"), x=ctx.ptr(x), scale=scale, shift=shift, y=ctx.ptr(y))

    def _lower_training(self, node: Node, ctx, batch: int, channels: int, inner: int, epsilon) -> None:
        x, y = node.inputs[0], node.outputs[0]
        gamma, beta, mean, var = node.inputs[1:5]
        momentum = float(node.attrs["momentum"])
        batch_mean, batch_var = ctx.scratch(channels * 4, "batch_mean"), ctx.scratch(channels * 4, "batch_var")
        running = [None, None]
        for k, (out, given) in enumerate(zip(node.outputs[1:], (mean, var))):
            if output_used(ctx, out):
                running[k] = (ctx.ptr(out), ctx.ptr(given))
            else:  # nothing reads it: leave it unplanned and unwritten, as an omitted output
                node.outputs[1 + k] = Value("", out.dtype, out.shape)
        scale, shift = ctx.scratch(channels * 4, "scale"), ctx.scratch(channels * 4, "shift")
        stats = {"mean": batch_mean, "var": batch_var, "count": batch * inner,
                 "running_mean": running[0], "running_var": running[1],
                 "momentum": np.float32(momentum), "rest": np.float32(1.0 - momentum)}
        ctx.emit("ops/batch_normalization.c.j2", batch=batch, channels=channels, inner=inner, stats=stats,
                 fold={"gamma": ctx.ptr(gamma), "beta": ctx.ptr(beta), "mean": batch_mean, "var": batch_var,
                       "kernel": ctx.kernel("mlcc_f32_norm_batch_fold")},
                 epsilon=epsilon, kernel=ctx.kernel("mlcc_f32_norm_channel_affine"), x=ctx.ptr(x), scale=scale, shift=shift, y=ctx.ptr(y))

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
        statistics = 4 * node.inputs[0].size if node.attrs.get("training_mode", 0) else 0
        return 2 * node.inputs[0].size + statistics
