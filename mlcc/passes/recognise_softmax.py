"""Recognise a softmax written out in elementary ops and make it one Softmax node.

    e = Exp(x)  or  Exp(x - ReduceMax(x, axis, keepdims))
    y = e / ReduceSum(e, axis, keepdims)  or  e * Reciprocal(ReduceSum(...))

along one axis becomes Softmax(x, axis): the kernel subtracts the row's maximum itself, so the spelling
without it (which overflows for large inputs) gains stability and the one with it loses three nodes.
Nothing fires when an intermediate is read elsewhere (graph outputs included).
"""

from __future__ import annotations

from .. import ops
from ..ir import Graph, Node
from ..ops import Role
from ._patterns import keeps_dims, reduce_axes
from ._rewrite import Rewriter

SOFTMAX_SINCE = 13  # the opset from which Softmax normalises along one axis


def run(graph: Graph) -> dict:
    m = Rewriter(graph)
    found = 0
    for exp in [n for n in graph.nodes if ops.has_role(n, Role.EXP)]:
        if _rewrite(m, exp):
            found += 1
    return {"softmax": found}


def _single_axis(node: Node, rank: int) -> int | None:
    axes = reduce_axes(node, rank)
    return axes[0] if axes is not None and len(axes) == 1 and keeps_dims(node) else None


def _rewrite(m: Rewriter, exp: Node) -> bool:
    e = exp.outputs[0]
    if e.dtype.kind != "f" or not e.shape:
        return False
    rank = len(e.shape)
    readers = m.readers_of(e)
    sums = [r for r in readers if ops.has_role(r, Role.REDUCE_SUM) and r.inputs[0] is e]
    if len(readers) != 2 or len(sums) != 1 or id(e) in m.outputs:
        return False
    total = sums[0]
    axis = _single_axis(total, rank)
    normaliser = next(r for r in readers if r is not total)
    if axis is None:
        return False
    nodes = [exp, total, normaliser]
    s = total.outputs[0]
    if ops.has_role(normaliser, Role.DIV) and normaliser.inputs == [e, s]:
        pass
    elif ops.has_role(normaliser, Role.MUL) and e in normaliser.inputs:
        inverse = m.producer(normaliser.inputs[1] if normaliser.inputs[0] is e else normaliser.inputs[0], Role.RECIPROCAL)
        if inverse is None or inverse.inputs[0] is not s:
            return False
        nodes.append(inverse)
    else:
        return False
    x = exp.inputs[0]
    shifted = m.producer(x, Role.SUB)
    if shifted is not None:
        peak = m.producer(shifted.inputs[1], Role.REDUCE_MAX)
        if peak is not None and peak.inputs[0] is shifted.inputs[0] and _single_axis(peak, rank) == axis:
            nodes += [shifted, peak]
            x = shifted.inputs[0]
    y = normaliser.outputs[0]
    if y.shape != x.shape or y.dtype != x.dtype or not m.closed(nodes, y):
        return False
    softmax = Node(ops.for_role(Role.SOFTMAX).op_type, normaliser.name, [x], [y], {"axis": axis}, "",
                   max(exp.opset, SOFTMAX_SINCE))
    m.swap(nodes, softmax)
    return True
