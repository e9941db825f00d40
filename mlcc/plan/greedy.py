"""The reference plan mlcc's arena is judged against: TFLite Micro's greedy-by-size placement of the graph
as imported (before any pass fuses, folds or shares anything).

Every intermediate tensor (not a graph input or output, not a constant) is one buffer, live from the node
that writes it to the last node that reads it, in the model's own node order. Buffers are taken largest
first (ties: the earlier first) and each is put at the lowest offset where it overlaps no already placed
buffer whose lifetime intersects its own. Sizes are rounded to the arena's 64-byte alignment, as mlcc's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph


@dataclass
class GreedyPlan:
    arena_bytes: int
    peak_node: str  # the node at which the placed buffers reach arena_bytes' top (the first such)
    tensors: int  # buffers planned


def greedy_by_size(graph: Graph, align: int) -> GreedyPlan:
    external = {id(v) for v in [*graph.inputs, *graph.outputs]}
    spans: dict[int, list] = {}  # id -> [value, first, last]
    for index, node in enumerate(graph.nodes):
        for v in node.inputs:
            if v is not None and id(v) in spans:
                spans[id(v)][2] = index
        for v in node.outputs:
            if v.name and not v.is_const and id(v) not in external and v.nbytes:
                spans[id(v)] = [v, index, index]
    buffers = [(-(-v.nbytes // align) * align, first, last, v.name) for v, first, last in spans.values()]
    buffers.sort(key=lambda b: (-b[0], b[1]))
    placed: list[tuple[int, int, int, int]] = []  # (offset, size, first, last)
    for size, first, last, _ in buffers:
        busy = sorted((o, s) for o, s, f, end in placed if f <= last and first <= end)
        offset = 0
        for o, s in busy:
            if offset + size <= o:
                break
            offset = max(offset, o + s)
        placed.append((offset, size, first, last))
    arena = max((o + s for o, s, _, _ in placed), default=0)
    top = min((f for o, s, f, _ in placed if o + s == arena), default=0)
    peak_node = graph.nodes[top].name if placed else ""
    return GreedyPlan(arena, peak_node, len(placed))
