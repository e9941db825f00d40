"""Dead-code elimination: drop nodes none of whose outputs reach a graph output."""

from __future__ import annotations

from ..ir import Graph


def run(graph: Graph) -> dict:
    needed = {id(v) for v in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if any(id(v) in needed for v in node.outputs):
            kept.append(node)
            needed.update(id(v) for v in node.inputs if v is not None)
    removed = len(graph.nodes) - len(kept)
    graph.nodes = kept[::-1]
    return {"removed_nodes": removed}
