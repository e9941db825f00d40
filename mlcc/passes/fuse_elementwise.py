"""Fuse each connected group of elementwise ops into one loop (a FusedElementwise node).

A group grows from a node backwards: a producer joins when it is elementwise and fusable (`Op.fusable`),
its output has the group's shape (so nothing is recomputed per broadcast element), is no graph output, and
every reader of it is already in the group. Operands from outside may broadcast. Groups of one stay as they are.
"""

from __future__ import annotations

from .. import ops
from ..ir import Graph, Node
from ..ops.fused_elementwise import FusedElementwise


def _fusable(node: Node) -> bool:
    op = ops.of(node)
    return (op is not None and op.elementwise and callable(getattr(op, "fusable", None))
            and len(node.outputs) == 1 and op.fusable(node))


def run(graph: Graph) -> dict:
    uses = graph.consumers()
    outputs = {id(v) for v in graph.outputs}
    producer = {id(v): n for n in graph.nodes for v in n.outputs}
    position = {id(n): i for i, n in enumerate(graph.nodes)}
    grouped: set[int] = set()
    groups: list[list[Node]] = []
    for root in reversed(graph.nodes):
        if id(root) in grouped or not _fusable(root):
            continue
        group, shape, grew = {id(root): root}, root.outputs[0].shape, True
        while grew:
            grew = False
            for member in list(group.values()):
                for v in member.inputs:
                    p = producer.get(id(v)) if v is not None else None
                    if (p is None or id(p) in group or id(p) in grouped or not _fusable(p)
                            or v.shape != shape or id(v) in outputs
                            or any(id(r) not in group for r in uses.get(id(v), []))):
                        continue
                    group[id(p)] = p
                    grew = True
        if len(group) > 1:
            grouped.update(group)
            groups.append(sorted(group.values(), key=lambda n: position[id(n)]))

    replaced: dict[int, Node] = {}  # root -> fused node; other members vanish
    for members in groups:
        inside = {id(v) for m in members for v in m.outputs}
        external = []
        for m in members:
            for v in m.inputs:
                if v is not None and id(v) not in inside and all(v is not e for e in external):
                    external.append(v)
        root = members[-1]
        fused = Node(FusedElementwise.op_type, root.name, external, [root.outputs[0]],
                     {"body": members}, domain=FusedElementwise.domain, opset=1)
        replaced[id(root)] = fused
    graph.nodes = [replaced.get(id(n), n) for n in graph.nodes if id(n) not in grouped or id(n) in replaced]
    fused_ops = sum(len(g) for g in groups)
    return {"groups": len(groups), "fused_nodes": fused_ops, "removed_nodes": fused_ops - len(groups)}
