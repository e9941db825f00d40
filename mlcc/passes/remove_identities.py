"""Remove nodes that forward their first input unchanged at inference (Identity, Dropout in test mode).

Ops declare this with the `removable_identity` capability; a node whose other outputs (Dropout's mask)
are still read is kept.
"""

from __future__ import annotations

from collections import Counter

from .. import ops
from ..ir import Graph


def run(graph: Graph) -> dict:
    uses = graph.consumers()
    outputs = {id(v) for v in graph.outputs}
    kept, removed = [], Counter()
    for node in graph.nodes:
        op = ops.of(node)
        extra_used = any(id(v) in uses or id(v) in outputs for v in node.outputs[1:])
        if op is not None and op.removable_identity and op.forwards_input(node) and not extra_used:
            graph.replace_uses(node.outputs[0], node.inputs[0])
            removed[node.op_type] += 1
        else:
            kept.append(node)
    graph.nodes = kept
    return {"removed_nodes": sum(removed.values()), "by_op": dict(sorted(removed.items()))}
