"""Fuse what follows a convolution or matrix product into its epilogue, applied while the tile is in registers.

For a node whose op takes an epilogue (`Op.epilogue_input`: Conv, Gemm, MatMul on float32), the chain
    node -> [Add of a constant bias] -> [Add (or a Sum of two) of a residual tensor] -> [activation]
becomes the one node: the constant folds into the node's bias (`Op.absorb_bias`), the residual becomes an
extra input at `epilogue_input`, and the activation (`Op.fused_activation`, or SiLU written as x * Sigmoid(x))
goes into the attributes `activation` and `activation_params`. The kernel computes
activation(product + bias + residual), so each link is taken only in that order, and only when the
intermediate has no other reader and is not a graph output.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ._rewrite import Rewriter


class _Chain:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.view = Rewriter(graph)  # readers and graph outputs, refreshed after each absorb
        self.removed: set[int] = set()

    def sole_reader(self, value: Value) -> Node | None:
        return self.view.sole_reader(value)

    def absorb(self, node: Node, follower: Node) -> None:
        """The follower's output becomes the node's; the node moves to the follower's place (a residual
        may be produced after the node) and the follower goes."""
        node.outputs[0] = follower.outputs[0]
        self.removed.add(id(follower))
        nodes = self.graph.nodes
        nodes.remove(node)
        nodes[next(i for i, n in enumerate(nodes) if n is follower)] = node
        self.view.refresh()

    # --- the links ------------------------------------------------------------------------------
    def other_operand(self, add: Node, value: Value) -> Value | None:
        if not ops.has_role(add, Role.ADD, Role.SUM) or len(add.inputs) != 2:  # Sum of two is an Add
            return None
        a, b = add.inputs
        other = b if a is value else a if b is value else None
        if other is None or other is value or add.outputs[0].shape != value.shape:
            return None  # Add(x, x), or an Add that broadcasts the product itself
        return other

    def bias(self, node: Node, op) -> bool:
        add = self.sole_reader(node.outputs[0])
        other = add is not None and self.other_operand(add, node.outputs[0])
        if not other or not other.is_const or other.dtype != np.float32:
            return False
        if not op.absorb_bias(node, other.data):
            return False
        self.absorb(node, add)
        return True

    def residual(self, node: Node, op) -> bool:
        add = self.sole_reader(node.outputs[0])
        other = add is not None and self.other_operand(add, node.outputs[0])
        if not other or other.is_const or other.shape != node.outputs[0].shape or other.dtype != np.float32:
            return False
        node.inputs = [*node.inputs, *[None] * (op.epilogue_input - len(node.inputs))][:op.epilogue_input] + [other]
        self.absorb(node, add)
        return True

    def activation(self, node: Node) -> str | None:
        out = node.outputs[0]
        readers = self.view.readers_of(out)
        if id(out) in self.view.outputs:
            return None
        if len(readers) == 1:
            act = readers[0]
            found = act.inputs[0] is out and ops.of(act) is not None and ops.of(act).fused_activation(act)
            if not found or act.outputs[0].shape != out.shape:
                return None
            kind, a, b = found
            node.attrs.update(activation=kind, activation_params=[float(a), float(b)])
            self.absorb(node, act)
            return kind
        if len(readers) == 2:  # SiLU: Mul(x, Sigmoid(x))
            sig = next((r for r in readers if ops.has_role(r, Role.SIGMOID)), None)
            mul = next((r for r in readers if ops.has_role(r, Role.MUL)), None)
            if (sig is None or mul is None or self.sole_reader(sig.outputs[0]) is not mul
                    or {id(v) for v in mul.inputs} != {id(out), id(sig.outputs[0])}
                    or mul.outputs[0].shape != out.shape):
                return None
            node.attrs.update(activation="silu", activation_params=[0.0, 0.0])
            self.removed.add(id(sig))
            self.graph.nodes.remove(sig)
            self.absorb(node, mul)
            return "silu"
        return None


def run(graph: Graph) -> dict:
    chain = _Chain(graph)
    fused: dict[str, int] = {}

    def count(what: str) -> None:
        fused[what] = fused.get(what, 0) + 1

    for node in list(graph.nodes):
        op = ops.of(node)
        if (id(node) in chain.removed or op is None or op.epilogue_input is None
                or node.outputs[0].dtype != np.float32 or "activation" in node.attrs
                or len(node.inputs) > op.epilogue_input):
            continue
        while chain.bias(node, op):
            count("bias")
        if chain.residual(node, op):
            count("residual")
        kind = chain.activation(node)
        if kind:
            count(kind)
    return {"removed_nodes": len(chain.removed), "fused": dict(sorted(fused.items()))}
