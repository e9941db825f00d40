"""Recognise a layer normalisation written out in elementary ops and make it one LayerNormalization node.

    mean = ReduceMean(x, trailing axes, keepdims)
    var  = ReduceMean((x - mean)^2)              (Pow 2, Mul of the difference by itself, ...)
    std  = Sqrt(var + eps)                       (or its inverse as Pow(var + eps, -0.5); eps may be gone)
    y    = (x - mean) / std * gamma + beta       (or x * (gamma / std) + (beta - mean * gamma / std), ...)

The output is expanded into a polynomial of x, mean and 1/std: any spelling of the formula (PyTorch's
Div, Keras' Reciprocal and folded affine, missing gamma or beta) is the one with the coefficients
{x/std: gamma, mean/std: -gamma, 1: beta}, gamma and beta constant along the non-normalised axes. The
group is replaced only when nothing outside it reads its intermediates.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ._patterns import Expander, forward_candidates, keeps_dims, matches, reduce_axes, scalar, trimmed
from ._rewrite import Rewriter

LAYER_NORM_SINCE = 17
SQUARED_DIFFERENCE = {(2, 0): 1.0, (1, 1): -2.0, (0, 2): 1.0}  # (x - mean)^2 over (x, mean)
X_R, MEAN_R, ONE = (1, 0, 1), (0, 1, 1), (0, 0, 0)  # monomials over (x, mean, 1/std)


def run(graph: Graph) -> dict:
    m = Rewriter(graph)
    found = 0
    for mean in [n for n in graph.nodes if ops.has_role(n, Role.REDUCE_MEAN)]:
        if any(mean is n for n in graph.nodes) and _rewrite(m, mean):
            found += 1
    return {"layer_normalization": found}


def _trailing_axis(node: Node, rank: int) -> int | None:
    """The first axis when the node reduces the trailing axes axis..rank-1 keeping dims, else None."""
    axes = reduce_axes(node, rank)
    if axes is None or not keeps_dims(node) or axes != tuple(range(axes[0], rank)):
        return None
    return axes[0]


def _rewrite(m: Rewriter, mean_node: Node) -> bool:
    x, mean = mean_node.inputs[0], mean_node.outputs[0]
    if x.dtype not in (np.float32, np.float16) or not x.shape:
        return False
    axis = _trailing_axis(mean_node, len(x.shape))
    if axis is None:
        return False
    for var_node in forward_candidates(m, mean, 3, (Role.SUB, Role.MUL, Role.POW, Role.REDUCE_MEAN)):
        if not ops.has_role(var_node, Role.REDUCE_MEAN) or _trailing_axis(var_node, len(x.shape)) != axis:
            continue
        variance = Expander(m, {id(x): 0, id(mean): 1}, 2)
        p = variance.expand(var_node.inputs[0])
        if p is None or not matches(p, SQUARED_DIFFERENCE):
            continue
        var = var_node.outputs[0]
        found = [(0.0, var, [])]  # no epsilon: the square root of the variance itself
        for add in m.readers_of(var):
            eps = _epsilon(add, var)
            if eps is not None:
                found.append((eps, add.outputs[0], [add]))
        for eps, shifted, adds in found:
            for root in m.readers_of(shifted):
                if _finish(m, x, axis, eps, shifted, [mean_node, var_node, *variance.nodes, *adds], root):
                    return True
    return False


def _epsilon(add: Node, var: Value) -> float | None:
    if not ops.has_role(add, Role.ADD) or var not in add.inputs or add.outputs[0].shape != var.shape:
        return None
    eps = scalar(add.inputs[1] if add.inputs[0] is var else add.inputs[0])
    return eps if eps is not None and eps >= 0 else None


def _finish(m: Rewriter, x: Value, axis: int, eps: float, shifted: Value, nodes: list[Node], root: Node) -> bool:
    """With `shifted` = var + eps found: `root` is its Sqrt (divided by later) or Pow(., -0.5); find the
    output."""
    if root.domain or root.inputs[0] is not shifted:
        return False
    std = root.outputs[0]
    if ops.has_role(root, Role.SQRT):
        leaves, inverse_leaves = {id(x): 0, id(nodes[0].outputs[0]): 1}, {id(std): 2}
    elif ops.has_role(root, Role.POW) and scalar(root.inputs[1]) == -0.5:
        leaves, inverse_leaves = {id(x): 0, id(nodes[0].outputs[0]): 1, id(std): 2}, {}
    else:
        return False
    for last in forward_candidates(m, std, 6):
        y = last.outputs[0]
        if y.shape != x.shape or y.dtype != x.dtype:
            continue
        expander = Expander(m, leaves, 3, inverse_leaves)
        p = expander.expand(y)
        affine = None if p is None else _affine(trimmed(p), x.shape, axis)
        if affine is None:
            continue
        group = list({id(n): n for n in [*nodes, root, *expander.nodes]}.values())
        if not m.closed(group, y):
            continue
        gamma, beta = affine
        scale = Value(m.fresh(f"{last.name}_scale"), x.dtype, gamma.shape, gamma.astype(x.dtype))
        inputs = [x, scale]
        if beta is not None:
            inputs.append(Value(m.fresh(f"{last.name}_bias"), x.dtype, beta.shape, beta.astype(x.dtype)))
        opset = max(nodes[0].opset, LAYER_NORM_SINCE)
        ln = Node(ops.for_role(Role.LAYER_NORMALIZATION).op_type, last.name, inputs, [y],
                  {"axis": axis, "epsilon": eps, "stash_type": 1}, "", opset)
        m.swap(group, ln)
        return True
    return False


def _affine(p, shape: tuple[int, ...], axis: int):
    """(gamma, beta) over the normalised shape when p is gamma * (x - mean) / std + beta; beta None if 0."""
    if X_R not in p or MEAN_R not in p or not set(p) <= {X_R, MEAN_R, ONE}:
        return None
    normalised = shape[axis:]
    gamma, beta = _over(p[X_R], shape, axis), _over(p.get(ONE), shape, axis)
    if gamma is None or (ONE in p and beta is None):
        return None
    minus = _over(p[MEAN_R], shape, axis)
    if minus is None or not np.allclose(-minus, gamma, rtol=1e-5, atol=1e-7):
        return None
    return np.broadcast_to(gamma, normalised).copy(), None if beta is None else np.broadcast_to(beta, normalised).copy()


def _over(c, shape: tuple[int, ...], axis: int) -> np.ndarray | None:
    """A coefficient as an array over the normalised axes, None when it varies along another axis."""
    if c is None:
        return None
    c = np.asarray(c)
    if c.ndim > len(shape):
        return None
    padded = c.reshape((1,) * (len(shape) - c.ndim) + c.shape)
    if any(d != 1 for d in padded.shape[:axis]):
        return None
    try:
        return np.broadcast_to(padded.reshape(padded.shape[axis:]), shape[axis:])
    except ValueError:
        return None
