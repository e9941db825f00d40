"""ai.onnx.ml LinearRegressor: Y [N, targets] = X . coefficients^T + intercepts, in float (X of any numeric
type is converted), then `post_transform`, which onnxruntime (the golden) applies to a single target only
when it is PROBIT."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._ml import literals, numeric_input, post_transform


def rows_features(node: Node) -> tuple[int, int]:
    """X [N, F], or [F] as one row, as onnxruntime reads it."""
    x = numeric_input(node, 0, "fi")
    if len(x.shape) not in (1, 2):
        raise UnsupportedError(f"X must be [N, F] or [F], not of rank {len(x.shape)}", node.where())
    return (1, x.shape[0]) if len(x.shape) == 1 else x.shape


def weights(node: Node, targets: int, features: int) -> tuple[np.ndarray, np.ndarray | None]:
    coef = np.asarray(node.attrs.get("coefficients") or [], np.float32)
    if coef.size != targets * features:
        raise UnsupportedError(f"{coef.size} coefficients for {targets} targets of {features} features", node.where())
    intercepts = node.attrs.get("intercepts")
    if intercepts is not None and len(intercepts) and len(intercepts) != targets:
        raise UnsupportedError(f"{len(intercepts)} intercepts for {targets} targets", node.where())
    return coef.reshape(targets, features), np.asarray(intercepts, np.float32) if intercepts else None


def emit(ctx, node: Node, targets: int, out: str, stride: int, label=None, labels=None, post=None, single=None):
    x = node.inputs[0]
    rows, features = rows_features(node)
    coef, intercepts = weights(node, targets, features)
    ctx.emit("ops/linear_model.c.j2", x=ctx.ptr(x), x_type=ctx.c_type(x), rows=rows, features=features,
             targets=targets, coef=ctx.constant(Value(f"{node.name}_coefficients", np.dtype(np.float32), coef.shape, coef)),
             intercepts=None if intercepts is None else
             ctx.constant(Value(f"{node.name}_intercepts", np.dtype(np.float32), intercepts.shape, intercepts)),
             out=out, stride=stride, label=label, labels=labels, post=post, single=single, lit=literals(np.float32))


@register
class LinearRegressor(Op):
    op_type = "LinearRegressor"
    domain = "ai.onnx.ml"
    attrs = {"coefficients": None, "intercepts": None, "post_transform": "NONE", "targets": 1}

    def infer(self, node: Node):
        rows, features = rows_features(node)
        weights(node, node.attrs["targets"], features)
        post_transform(node)
        return [(np.float32, (rows, node.attrs["targets"]))]

    def flops(self, node: Node) -> int:
        rows, features = rows_features(node)
        return 2 * rows * features * node.attrs["targets"]

    def lower(self, node: Node, ctx) -> None:
        targets, post = node.attrs["targets"], post_transform(node)
        emit(ctx, node, targets, ctx.ptr(node.outputs[0]), targets, post=post,
             single="probit" if post == "probit" else None)
