"""Recognise scaled dot-product attention and make it one mlcc.FusedAttention node (ops/fused_attention.py).

    scores = MatMul(Q, K^T)                 K^T a Transpose of K, or K itself read transposed (_trans_b)
    scores = scores * c  or  scores / c     any number of scalar scales, also on Q or K^T alone
    scores = scores + mask                  optional additive mask, broadcast to the scores
    scores = Where(keep, scores, fill)      optional boolean mask (or Where(drop, fill, scores))
    y      = MatMul(Softmax(scores, last axis), V)

The operands are then followed back through the views that split heads (Transpose, Reshape, Flatten,
Squeeze, Unsqueeze, Gather of one index, Slice, Expand, and scalar scales) while nothing else reads them,
and y forward through Transposes and Reshapes: the fused node reads and writes the tensors around them in
place through strides, so the head-splitting copies vanish with the pattern. Nothing fires when an
intermediate of the core (scores, probabilities) is read elsewhere or is a graph output.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ..ops._attention import broadcast_strides
from ..ops._views import View, contiguous
from ..ops.fused_attention import FusedAttention
from ..ops.softmax import softmax_view
from ._patterns import scalar
from ._rewrite import Rewriter

SCALES = (Role.MUL, Role.DIV)
MAX_CHAIN = 12


def data_input(node: Node) -> Value | None:
    """The input a view node's output is a view of (for a scalar Mul/Div: the non-constant operand)."""
    if ops.has_role(node, *SCALES):
        divides = ops.has_role(node, Role.DIV)
        a, b = node.inputs
        factor = scalar(b) if divides or not a.is_const else scalar(a)
        data = a if (divides or not a.is_const) else b
        if factor is None or factor == 0 or data.is_const or data.shape != node.outputs[0].shape or data.dtype.kind != "f":
            return None
        return data
    return node.inputs[0]


def scale_factor(node: Node) -> float:
    if ops.has_role(node, Role.MUL):
        return scalar(node.inputs[1]) if not node.inputs[0].is_const else scalar(node.inputs[0])
    if ops.has_role(node, Role.DIV):
        return 1.0 / scalar(node.inputs[1])
    return 1.0


def is_input_view(node: Node) -> bool:
    """Can an operand be read through this node: a strided view (`Op.strided_view`) or a scalar scale?"""
    op = ops.of(node)
    return op is not None and not node.domain and (op.has_strided_view or op.role in SCALES)


def is_output_view(node: Node) -> bool:
    """Can the result be written through this node: a reordering of all of its input (`Op.input_view`)?"""
    op = ops.of(node)
    return op is not None and not node.domain and op.has_input_view


def step_view(node: Node, view: View) -> View | None:
    """The view of node's output, given the view of its data input."""
    if ops.has_role(node, *SCALES):
        return view
    return ops.of(node).strided_view(node, view)


class _Operand:
    """An operand of the core followed back through view nodes: `chain` from the operand down."""

    def __init__(self, m: Rewriter, value: Value):
        self.value, self.chain = value, []
        v = value
        while len(self.chain) < MAX_CHAIN and id(v) not in m.outputs:
            node = m.producer(v)
            data = None if node is None or not is_input_view(node) else data_input(node)
            if data is None:
                break
            self.chain.append(node)
            v = data

    def view(self) -> tuple[View, float]:
        """The operand as a view of the chain's base, and the product of the chain's scales; the chain is
        cut where a step cannot be expressed."""
        base = data_input(self.chain[-1]) if self.chain else self.value
        view, factor, kept = contiguous(base), 1.0, []
        for node in reversed(self.chain):
            stepped = step_view(node, view)
            if stepped is None:
                view, factor, kept = contiguous(node.outputs[0]), 1.0, []
                continue
            view, factor = stepped, factor * scale_factor(node)
            kept.insert(0, node)
        self.chain = kept
        return view, factor

    def cut_at(self, m: Rewriter, members: set[int]) -> bool:
        """Cut the chain above the first node whose output something outside `members` reads."""
        for i, node in enumerate(self.chain):
            v = node.outputs[0]
            if id(v) in m.outputs or any(id(r) not in members for r in m.readers_of(v)):
                self.chain = self.chain[:i]
                return True
        return False


def run(graph: Graph) -> dict:
    m = Rewriter(graph)
    found, absorbed = 0, 0
    for softmax in [n for n in graph.nodes if ops.has_role(n, Role.SOFTMAX)]:
        if any(softmax is n for n in graph.nodes):
            done = _rewrite(m, softmax)
            if done is not None:
                found += 1
                absorbed += done
    return {"attention": found, "absorbed_views": absorbed}


def _pad4(view: View, swap: bool) -> View | None:
    """A rank 2..4 operand view as [batch, head, row, col] (swapping row and col when read transposed)."""
    shape, strides = list(view.shape), list(view.strides)
    if not 2 <= len(shape) <= 4:
        return None
    if swap:
        shape[-2:], strides[-2:] = shape[-1:-3:-1], strides[-1:-3:-1]
    pad = 4 - len(shape)
    shape, strides = [1] * pad + shape, [0] * pad + strides
    return View(view.value, view.offset, tuple(shape), tuple(0 if d == 1 else s for d, s in zip(shape, strides)))


def _rewrite(m: Rewriter, softmax: Node) -> int | None:
    p = softmax.outputs[0]
    if p.dtype != np.float32 or not 2 <= len(p.shape) <= 4:
        return None
    outer, n, inner = softmax_view(softmax)
    if inner != 1 or n != p.shape[-1]:
        return None
    mm2 = m.sole_reader(p)
    if mm2 is None or not ops.has_role(mm2, Role.MATMUL) or mm2.inputs[0] is not p or mm2.attrs.get("_trans_a", 0):
        return None
    core = [softmax, mm2]
    # the scores, back from the Softmax: Where, Add, scales, then the product
    scores, keep, keep_when, fill, add_mask, scale = softmax.inputs[0], None, True, float("-inf"), None, 1.0
    node = m.producer(scores, Role.SELECT)
    if node is not None and m.sole_reader(scores) is softmax:
        cond, a, b = node.inputs
        if scalar(b) is not None and not a.is_const:
            keep, scores, fill = cond, a, scalar(b)
        elif scalar(a) is not None and not b.is_const:
            keep, scores, fill, keep_when = cond, b, scalar(a), False
        if keep is not None:
            core.append(node)
    node = m.producer(scores, Role.ADD)
    if node is not None and m.sole_reader(scores) is not None:
        for i in (0, 1):
            if _leads_to_matmul(m, node.inputs[i]):
                add_mask, scores = node.inputs[1 - i], node.inputs[i]
                core.append(node)
                break
    while (node := m.producer(scores, *SCALES)) is not None and m.sole_reader(scores) is not None:
        data = data_input(node)
        if data is None:
            break
        scale *= scale_factor(node)
        core.append(node)
        scores = data
    mm1 = m.producer(scores, Role.MATMUL)
    if mm1 is None or m.sole_reader(scores) is None or any(v.dtype != np.float32 for v in [*mm1.inputs, *mm2.inputs]):
        return None
    core.append(mm1)
    if not m.closed(core, mm2.outputs[0]):
        return None
    y_logical = mm2.outputs[0]
    batch_dims = (1,) * (4 - len(y_logical.shape)) + tuple(y_logical.shape[:-2])
    q_len, v_dim, kv_len = y_logical.shape[-2], y_logical.shape[-1], p.shape[-1]
    dims4 = (*batch_dims, q_len, kv_len)
    masks = []
    for mask, dtype in ((add_mask, np.float32), (keep, np.bool_)):
        strides = None if mask is None else broadcast_strides(mask.shape, dims4)
        if mask is not None and (strides is None or mask.dtype != dtype):
            return None
        masks.append(None if mask is None else View(mask, 0, dims4, strides))

    operands = [_Operand(m, v) for v in (mm1.inputs[0], mm1.inputs[1], mm2.inputs[1])]
    y_view, out_chain = _output_view(y_logical, _output_chain(m, y_logical))
    members = {id(n) for n in core}
    while True:
        while True:  # the chains' nodes join the group while nothing else reads their outputs
            group = members | {id(n) for o in operands for n in o.chain} | {id(n) for n in out_chain}
            if not any(o.cut_at(m, group) for o in operands):
                break
        lengths = [len(o.chain) for o in operands]
        views_and_factors = [o.view() for o in operands]
        # view() drops the steps below one it cannot express; they stay in the graph and read what another
        # operand's chain may have taken (q, k and v sliced from one packed tensor): cut again until stable
        if lengths == [len(o.chain) for o in operands]:
            break
    views = []
    for view, factor in views_and_factors:
        views.append(view)
        scale *= factor
    q = _pad4(views[0], bool(mm1.attrs.get("_trans_a", 0)))
    kt = _pad4(views[1], bool(mm1.attrs.get("_trans_b", 0)))
    v = _pad4(views[2], bool(mm2.attrs.get("_trans_b", 0)))
    y = _pad4(y_view, False)
    if None in (q, kt, v, y) or y.strides[3] != 1 and v_dim > 1:
        return None
    k = View(kt.value, kt.offset, (*kt.shape[:2], kt.shape[3], kt.shape[2]), (*kt.strides[:2], kt.strides[3], kt.strides[2]))
    qk_dim = q.shape[3]
    kv_group = batch_dims[1] if batch_dims[1] > 1 and k.strides[1] == 0 and v.strides[1] == 0 else 1
    strided = lambda view: [view.offset, *view.strides]
    attrs = {"dims": [*batch_dims, q_len, kv_len, qk_dim, v_dim], "kv_group": kv_group,
             "q": strided(q), "k": strided(k), "v": strided(v), "y": strided(y), "scale": scale,
             "keep_when": int(keep_when), "fill": fill, "causal": 0}
    inputs = [q.value, k.value, v.value, None, None]
    for i, (name, view) in enumerate(zip(("add_mask", "keep_mask"), masks)):
        if view is not None:
            attrs[name] = strided(view)
            inputs[3 + i] = view.value
    while inputs[-1] is None:
        inputs.pop()
    group = [*core, *(n for o in operands for n in o.chain), *out_chain]
    group = list({id(n): n for n in group}.values())
    fused = Node(FusedAttention.op_type, mm2.name, inputs, [y.value], attrs, FusedAttention.domain, 1)
    m.swap(group, fused)
    return len(group) - len(core)


def _leads_to_matmul(m: Rewriter, value: Value) -> bool:
    """value is a product of two tensors, maybe scaled by scalars (the scores, not the mask)."""
    while (node := m.producer(value, *SCALES)) is not None and data_input(node) is not None:
        value = data_input(node)
    return m.producer(value, Role.MATMUL) is not None


def _output_chain(m: Rewriter, y: Value) -> list[Node]:
    chain, v = [], y
    while len(chain) < MAX_CHAIN:
        reader = m.sole_reader(v)
        if reader is None or not is_output_view(reader) or reader.inputs[0] is not v:
            break
        chain.append(reader)
        v = reader.outputs[0]
    return chain


def _output_view(y: Value, chain: list[Node]) -> tuple[View, list[Node]]:
    """y as a view of the last tensor of the longest prefix of `chain` that expresses it with contiguous
    rows, and that prefix."""
    while chain:
        view = contiguous(chain[-1].outputs[0])
        for node in reversed(chain):
            view = ops.of(node).input_view(node, view)
            if view is None:
                break
        if view is not None and (view.strides[-1] == 1 or view.shape[-1] == 1):
            return view, chain
        chain = chain[:-1]
    return contiguous(y), []
