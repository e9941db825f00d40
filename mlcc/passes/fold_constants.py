"""Constant folding: a node whose outputs are all known at build time is replaced by those constants.

The frontend already evaluated such nodes through each op's numpy reference while typing the graph
(that is how Shape -> Gather -> Concat -> Reshape chains and ConstantOfShape weights get their values);
this pass drops the nodes so their results become weights.
"""

from __future__ import annotations

from collections import Counter

from ..ir import Graph


def run(graph: Graph) -> dict:
    kept, folded = [], Counter()
    for node in graph.nodes:
        live_outputs = [v for v in node.outputs if v.name]
        if live_outputs and all(v.is_const for v in live_outputs):
            folded[node.op_type] += 1
        else:
            kept.append(node)
    graph.nodes = kept
    return {"folded_nodes": sum(folded.values()), "by_op": dict(sorted(folded.items()))}
