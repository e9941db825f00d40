"""Move an activation of a Concat onto the Concat's inputs, so the producers apply it in their epilogues.

    Concat(a, b, ...) -> act   becomes   Concat(act(a), act(b), ...)

An activation (`Op.fused_activation`) works element by element, so applying it to each slice is the same.
fuse_epilogues, which runs next, then folds each act(a) into a's producer when that producer takes an
epilogue (a convolution or matrix product); an input whose producer cannot keeps its own act, a pass over
its slice alone, which the planner runs in place inside the Concat's output. The Concat itself stays a place
its producers write into, so the separate pass over the whole concatenated tensor is gone (ShuffleNet's
stride-2 units: Concat(Conv, AveragePool) -> Relu). Taken only when the Concat is the activation's sole
input, the activation the Concat's sole reader, and at least one producer can take the activation.
"""

from __future__ import annotations

from .. import ops
from ..ir import Graph, Node, Value
from ._rewrite import Rewriter


def _takes_activation(view: Rewriter, value: Value, concat: Node) -> bool:
    """Is `value` made by an epilogue op, as its only output, for this Concat alone, with no activation yet?"""
    node = view.producer(value)
    op = ops.of(node) if node is not None else None
    return (op is not None and op.epilogue_input is not None and "activation" not in node.attrs
            and len(node.outputs) == 1 and value.dtype == "float32" and view.sole_reader(value) is concat)


def run(graph: Graph) -> dict:
    view = Rewriter(graph)
    moved = 0
    for concat in list(graph.nodes):
        op = ops.of(concat)
        if op is None or not op.gathers_inputs or len(concat.outputs) != 1:
            continue
        out = concat.outputs[0]
        act = view.sole_reader(out)
        act_op = ops.of(act) if act is not None else None
        if (act_op is None or act.inputs[0] is not out or any(v is out for v in act.inputs[1:]) or len(act.outputs) != 1
                or act.outputs[0].shape != out.shape or act.outputs[0].dtype != out.dtype
                or not act_op.fused_activation(act)):
            continue
        parts = concat.inputs
        if (any(v is None or v.is_const for v in parts) or len({id(v) for v in parts}) != len(parts)
                or not any(_takes_activation(view, v, concat) for v in parts)):
            continue
        applied = []
        for part in parts:
            result = Value(view.fresh(f"{part.name}_{act.name}"), part.dtype, part.shape, extents=part.extents)
            applied.append(Node(act.op_type, view.fresh(f"{act.name}_{part.name}"), [part, *act.inputs[1:]], [result],
                                dict(act.attrs), act.domain, act.opset))
        concat.inputs = [n.outputs[0] for n in applied]
        concat.outputs = [act.outputs[0]]
        view.replace(concat, [*applied, concat])
        view.drop(act)
        moved += 1
    view.finish()
    return {"moved": moved}
