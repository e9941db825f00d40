"""What the local rewriting passes share: who produces and who reads each value, fresh names, new constants.

A `Rewriter` takes its maps once; passes edit nodes in place, mark the nodes they remove with `drop` (or
swap one for new nodes with `replace`), and call `finish()` to apply those. Rewrites keep each consumer's input Value, so the maps stay true for the
values a pass has not touched yet.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Value


def fresh_name(taken: set[str], base: str) -> str:
    """`base`, or `base_2`, `base_3`, ... : the first not in `taken`, which it joins."""
    name, i = base, 1
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    taken.add(name)
    return name


class Rewriter:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.consumers = graph.consumers()
        self.producer = {id(v): n for n in graph.nodes for v in n.outputs}
        self.graph_outputs = {id(v) for v in graph.outputs}
        self._names = {v.name for v in graph.values()} | {n.name for n in graph.nodes}
        self._dropped: set[int] = set()
        self._replacements: dict[int, list[Node]] = {}

    def sole_consumer(self, value: Value) -> Node | None:
        """The one node reading `value` once, when nothing else (no other node, no graph output) needs it."""
        users = self.consumers.get(id(value), [])
        if id(value) in self.graph_outputs or len(users) != 1:
            return None
        return users[0]

    def produced_by(self, value: Value | None, op_types) -> Node | None:
        node = self.producer.get(id(value)) if value is not None else None
        return node if node is not None and node.op_type in op_types and node.domain == "" and id(node) not in self._dropped else None

    def fresh(self, base: str) -> str:
        return fresh_name(self._names, base)

    def constant(self, base: str, data: np.ndarray) -> Value:
        data = np.ascontiguousarray(data)
        return Value(self.fresh(base), data.dtype, tuple(data.shape), data)

    def value_like(self, base: str, like: Value) -> Value:
        return Value(self.fresh(base), like.dtype, like.shape)

    def node(self, op_type: str, base: str, inputs: list, outputs: list[Value], attrs: dict, like: Node) -> Node:
        """A new default-domain node at `like`'s opset; the caller puts it in the graph."""
        node = Node(op_type, self.fresh(base), inputs, outputs, dict(attrs), "", like.opset)
        self.producer.update({id(v): node for v in outputs})
        return node

    def drop(self, node: Node) -> None:
        self._dropped.add(id(node))

    def replace(self, node: Node, new_nodes: list[Node]) -> None:
        """Put `new_nodes` where `node` was (they may read only what `node` could)."""
        self._dropped.add(id(node))
        self._replacements[id(node)] = new_nodes

    def dropped(self, node: Node) -> bool:
        return id(node) in self._dropped

    def finish(self) -> None:
        nodes = []
        for n in self.graph.nodes:
            nodes += self._replacements.get(id(n), []) if id(n) in self._dropped else [n]
        self.graph.nodes = nodes


def channel_vector(const: Value, shape: tuple[int, ...], axis: int = 1) -> np.ndarray | None:
    """A constant broadcast against a tensor of `shape` as one value per index of `axis` (float64, length
    shape[axis]); None when it varies along another axis or would change the tensor's shape."""
    rank = len(shape)
    if len(const.shape) > rank or axis >= rank:
        return None
    padded = (1,) * (rank - len(const.shape)) + tuple(const.shape)
    if any(d != 1 for i, d in enumerate(padded) if i != axis) or padded[axis] not in (1, shape[axis]):
        return None
    values = const.data.astype(np.float64).reshape(-1)
    return np.broadcast_to(values, (shape[axis],)).copy()
