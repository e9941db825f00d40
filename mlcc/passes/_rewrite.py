"""The pass toolkit: who produces and who reads each value, fresh names, new constants and nodes, and the
two ways to edit a graph.

- Local rewrites edit nodes in place, mark the nodes they remove with `drop` (or swap one for new nodes with
  `replace`) and call `finish()` once to apply those. They keep each consumer's input Value, so the maps stay
  true for the values a pass has not touched yet.
- Recognisers match a group of nodes, check it is `closed` and `swap` it for one node at once; the maps are
  rebuilt (`refresh`) after each swap.

Nodes are asked for by what their op does (mlcc.ops.Role), never by name.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role


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
        self._dropped: set[int] = set()
        self._replacements: dict[int, list[Node]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the maps from the graph as it is now."""
        self.readers = self.graph.consumers()
        self.producers = {id(v): n for n in self.graph.nodes for v in n.outputs}
        self.outputs = {id(v) for v in self.graph.outputs}
        self.order = {id(n): i for i, n in enumerate(self.graph.nodes)}
        self._names = {v.name for v in self.graph.values()} | {n.name for n in self.graph.nodes}

    # --- looking -----------------------------------------------------------------------------------
    def producer(self, value: Value | None, *roles: Role) -> Node | None:
        """The node making `value` if it is a default-domain node not dropped whose op has one of `roles`
        (any such node when no role is given)."""
        node = self.producers.get(id(value)) if value is not None else None
        if node is None or node.domain or id(node) in self._dropped or (roles and not ops.has_role(node, *roles)):
            return None
        return node

    def readers_of(self, value: Value) -> list[Node]:
        return self.readers.get(id(value), [])

    def sole_reader(self, value: Value) -> Node | None:
        """The one node reading `value` (once), when no other node and no graph output needs it."""
        readers = self.readers_of(value)
        if id(value) in self.outputs or len(readers) != 1:
            return None
        return readers[0]

    def is_read(self, value: Value) -> bool:
        """Does a node or a graph output read `value`?"""
        return id(value) in self.outputs or id(value) in self.readers

    def closed(self, nodes: list[Node], result: Value) -> bool:
        """True when every value the nodes make, except `result`, is read only by these nodes."""
        members = {id(n) for n in nodes}
        for node in nodes:
            for v in node.outputs:
                if v is result or not v.name:
                    continue
                if id(v) in self.outputs or any(id(r) not in members for r in self.readers_of(v)):
                    return False
        return True

    # --- making ------------------------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        """A value or node name not taken yet."""
        return fresh_name(self._names, base)

    def constant(self, base: str, data: np.ndarray) -> Value:
        data = np.ascontiguousarray(data)
        return Value(self.fresh(base), data.dtype, tuple(data.shape), data)

    def value_like(self, base: str, like: Value) -> Value:
        return Value(self.fresh(base), like.dtype, like.shape)

    def node(self, role: Role, base: str, inputs: list, outputs: list[Value], attrs: dict, like: Node) -> Node:
        """A new node of the default-domain op taking `role`, at `like`'s opset; the caller puts it in the graph."""
        node = Node(ops.for_role(role).op_type, self.fresh(base), inputs, outputs, dict(attrs), "", like.opset)
        self.producers.update({id(v): node for v in outputs})
        return node

    # --- local rewrites ----------------------------------------------------------------------------
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

    # --- recognisers -------------------------------------------------------------------------------
    def swap(self, nodes: list[Node], new: Node) -> None:
        """Remove `nodes` and put `new` where the last of them was (it reads only what they could)."""
        members = {id(n) for n in nodes}
        last = max(self.order[id(n)] for n in nodes)
        kept = []
        for i, n in enumerate(self.graph.nodes):
            if i == last:
                kept.append(new)
            elif id(n) not in members:
                kept.append(n)
        self.graph.nodes = kept
        self.refresh()


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
