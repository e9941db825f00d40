"""Algebraic simplifications, each a local rewrite:

- x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1 are x, when broadcasting the constant changes neither shape nor dtype;
- x / c by a float constant is x * (1 / c);
- consecutive Transposes compose into one, an identity Transpose goes, a Transpose of a constant is folded;
- consecutive nodes that relabel a shape (`Op.relabels_shape`: Reshape, Flatten, Squeeze, Unsqueeze)
  collapse into one Reshape, one to the same shape goes;
- a Transpose of the last two axes feeding an operand its reader can read transposed (`Op.transposed_reads`:
  Gemm's transA/transB, a float32 MatMul's internal `_trans_a`/`_trans_b`: operand strides, no copy) goes.
Nodes left unread by these rewrites are removed. The rules find their nodes by role (mlcc.ops.Role).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node
from ..ops import Role
from ._rewrite import Rewriter

# role -> (identity element, the operand positions it may take)
IDENTITY_ELEMENT = {Role.MUL: (1, (0, 1)), Role.ADD: (0, (0, 1)), Role.SUB: (0, (1,)), Role.DIV: (1, (1,))}


class _Simplifier:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.rw = Rewriter(graph)
        self.did: dict[str, int] = {}
        self.emptied: list[Node] = []  # producers whose reader went elsewhere: removed if nothing reads them

    def count(self, what: str) -> None:
        self.did[what] = self.did.get(what, 0) + 1

    def forward(self, node: Node, value) -> None:
        """The node computes `value` unchanged: its readers read `value` instead."""
        self.graph.replace_uses(node.outputs[0], value)
        self.rw.drop(node)

    def run(self) -> dict:
        for node in list(self.graph.nodes):
            if node.domain:
                continue
            for rule in (self.identity, self.reciprocal, self.transpose, self.reshape, self.transposed_read):
                if self.rw.dropped(node) or rule(node):
                    break
        self.rw.finish()
        removed = self._remove_unread()
        return {"rewrites": sum(self.did.values()), **dict(sorted(self.did.items())), "removed_unread": removed}

    # --- rules, in order; each returns True when no later rule applies to the node ----------------
    def identity(self, node: Node) -> bool:
        if not ops.has_role(node, *IDENTITY_ELEMENT) or len(node.inputs) != 2:
            return False
        element, positions = IDENTITY_ELEMENT[ops.of(node).role]
        out = node.outputs[0]
        for pos in positions:
            c, x = node.inputs[pos], node.inputs[1 - pos]
            if c.is_const and x.shape == out.shape and x.dtype == out.dtype and c.size and np.all(c.data == element):
                self.forward(node, x)
                self.count(f"{node.op_type.lower()}_identity")
                return True
        return False

    def reciprocal(self, node: Node) -> bool:
        c = node.input(1)
        if not ops.has_role(node, Role.DIV) or c is None or not c.is_const or c.dtype.kind != "f":
            return False
        with np.errstate(divide="ignore"):
            inverse = (1.0 / c.data.astype(np.float64)).astype(c.dtype)
        node.op_type = ops.for_role(Role.MUL).op_type
        node.inputs = [node.inputs[0], self.rw.constant(f"{c.name}_reciprocal", inverse)]
        self.count("div_to_mul")
        return True

    def transpose(self, node: Node) -> bool:
        if not ops.has_role(node, Role.TRANSPOSE):
            return False
        src, perm = node.inputs[0], _perm(node)
        if src.is_const:
            node.outputs[0].data = np.ascontiguousarray(np.transpose(src.data, perm))
            self.rw.drop(node)
            self.count("transpose_of_constant")
            return True
        inner = self.rw.producer(src, Role.TRANSPOSE)
        if inner is not None:
            inner_perm = _perm(inner)
            perm = [inner_perm[p] for p in perm]
            src = node.inputs[0] = inner.inputs[0]
            node.attrs["perm"] = perm
            self.emptied.append(inner)
            self.count("transposes_composed")
        if perm == sorted(perm):
            self.forward(node, src)
            self.count("identity_transpose")
            return True
        return False

    def reshape(self, node: Node) -> bool:
        if not _relabels_shape(node):
            return False
        out = node.outputs[0]
        inner = self.rw.producer(node.inputs[0])
        if inner is not None and _relabels_shape(inner) and 0 not in out.shape and node.opset >= 5:
            node.op_type, node.attrs = ops.for_role(Role.RESHAPE).op_type, {"allowzero": 0}
            shape = self.rw.constant(f"{node.name}_shape", np.array(out.shape, dtype=np.int64))
            node.inputs = [inner.inputs[0], shape]
            self.emptied.append(inner)
            self.count("reshapes_collapsed")
        if node.inputs[0].shape == out.shape:
            self.forward(node, node.inputs[0])
            self.count("identity_reshape")
            return True
        return False

    def transposed_read(self, node: Node) -> bool:
        op = ops.of(node)
        for i, flag in ({} if op is None else op.transposed_reads(node)).items():
            t = self.rw.producer(node.inputs[i], Role.TRANSPOSE)
            rank = len(node.inputs[i].shape)
            if t is None or rank < 2:
                continue
            if _perm(t) != [*range(rank - 2), rank - 1, rank - 2]:
                continue
            node.inputs[i] = t.inputs[0]
            node.attrs[flag] = 1 - int(node.attrs.get(flag, 0))
            self.emptied.append(t)
            self.count("transpose_into_product")
        return False

    def _remove_unread(self) -> int:
        """Drop the emptied producers nothing reads now (a chain's inner links were all emptied)."""
        readers = self.graph.consumers()
        outputs = {id(v) for v in self.graph.outputs}
        present = {id(n) for n in self.graph.nodes}
        dead = {id(n) for n in self.emptied
                if id(n) in present and not any(id(v) in readers or id(v) in outputs for v in n.outputs)}
        self.graph.nodes = [n for n in self.graph.nodes if id(n) not in dead]
        return len(dead)


def _perm(transpose: Node) -> list[int]:
    return ops.of(transpose).perm(transpose)


def _relabels_shape(node: Node) -> bool:
    op = ops.of(node)
    return op is not None and op.relabels_shape


def run(graph: Graph) -> dict:
    return _Simplifier(graph).run()
