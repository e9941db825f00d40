"""Fold inference-mode BatchNormalization into the weights of the Conv, ConvTranspose, Gemm or MatMul before it.

With constant statistics BN is y = x * s + t per channel (axis 1), s = scale / sqrt(var + epsilon) and
t = B - mean * s. Constant per-channel Mul, Add, Sub and Div right after it (Caffe2 exports put a scale
and shift there) join the same s and t. When the producer's output is read by the BN alone and its weights
are constants, s scales the producer's output channels and t becomes (or joins) its bias; a MatMul of 2-D
float32 operands becomes a Gemm to take that bias. Otherwise (after a Concat, a pool, a graph input) the BN
becomes a Mul and an Add by constant [C,1,...] operands, which later passes fuse into a loop or an epilogue.
Folded values are computed in float64 and stored in the weights' dtype.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Value
from ._rewrite import Rewriter, channel_vector

# y = x <op> c applied to the affine map (s, t) by a per-channel constant c; Sub and Div only with x on the left
ABSORBED = {
    "Mul": lambda s, t, c: (s * c, t * c),
    "Add": lambda s, t, c: (s, t + c),
    "Sub": lambda s, t, c: (s, t - c),
    "Div": lambda s, t, c: (s / c, t / c),
}
COMMUTATIVE = {"Mul", "Add"}


def run(graph: Graph) -> dict:
    rw = Rewriter(graph)
    folded: dict[str, int] = {}
    lone = absorbed = 0
    for bn in list(graph.nodes):
        if bn.op_type != "BatchNormalization" or bn.domain or not _foldable(bn, rw):
            continue
        x = bn.inputs[0]
        scale, shift = _affine(bn)
        end, chain = bn.outputs[0], []
        if not _per_activation(bn):
            end, chain, scale, shift = _absorb_followers(end, scale, shift, rw)
        producer = rw.produced_by(x, FOLD_INTO)
        into = (producer is not None and not _per_activation(bn) and rw.sole_consumer(x) is bn
                and FOLD_INTO[producer.op_type](producer, scale, shift, rw))
        if into:
            folded[into] = folded.get(into, 0) + 1
            producer.outputs[0] = end
            rw.producer[id(end)] = producer
            rw.drop(bn)
        else:
            rw.replace(bn, _scale_and_shift(bn, x, end, scale, shift, rw))
            lone += 1
        for node in chain:
            rw.drop(node)
        absorbed += len(chain)
    rw.finish()
    return {"folded": sum(folded.values()), "into": dict(sorted(folded.items())),
            "to_scale_shift": lone, "absorbed_nodes": absorbed}


def _foldable(bn: Node, rw: Rewriter) -> bool:
    x, params = bn.inputs[0], bn.inputs[1:5]
    extra_used = any(v.name and (id(v) in rw.graph_outputs or id(v) in rw.consumers) for v in bn.outputs[1:])
    if len(params) != 4 or any(p is None or not p.is_const for p in params) or len(x.shape) < 2:
        return False
    channels = int(np.prod(x.shape[1:])) if _per_activation(bn) else x.shape[1]
    return (all(p.size == channels for p in params) and x.dtype.kind == "f"
            and not bn.attrs.get("training_mode", 0) and not extra_used)


def _per_activation(bn: Node) -> bool:
    """Opset 7's spatial=0: statistics per activation (C x D1 x ...) instead of per channel."""
    return bn.opset < 9 and not bn.attrs.get("spatial", 1)


def _affine(bn: Node) -> tuple[np.ndarray, np.ndarray]:
    gamma, beta, mean, var = (p.data.astype(np.float64).reshape(-1) for p in bn.inputs[1:5])
    scale = gamma / np.sqrt(var + np.float64(np.float32(bn.attrs["epsilon"])))
    return scale, beta - mean * scale


def _absorb_followers(end: Value, scale, shift, rw: Rewriter):
    """Extend (scale, shift) over the chain of per-channel constant Mul/Add/Sub/Div reading the BN's output."""
    chain = []
    while (node := rw.sole_consumer(end)) is not None and node.op_type in ABSORBED and not node.domain:
        if len(node.inputs) != 2 or node.outputs[0].shape != end.shape or node.outputs[0].dtype != end.dtype:
            break
        mine = 0 if node.inputs[0] is end else 1
        other = node.inputs[1 - mine]
        if (mine == 1 and node.op_type not in COMMUTATIVE) or not other.is_const or other.dtype != end.dtype:
            break
        c = channel_vector(other, end.shape)
        if c is None or (node.op_type == "Div" and not np.all(c)):
            break
        scale, shift = ABSORBED[node.op_type](scale, shift, c)
        chain.append(node)
        end = node.outputs[0]
    return end, chain, scale, shift


def _scale_and_shift(bn: Node, x: Value, end: Value, scale, shift, rw: Rewriter) -> list[Node]:
    """x * s + t with s and t as constants shaped to broadcast along axis 1 (or per activation)."""
    shape = x.shape[1:] if _per_activation(bn) else (x.shape[1],) + (1,) * (len(x.shape) - 2)
    s = rw.constant(f"{bn.name}_scale", scale.reshape(shape).astype(x.dtype))
    t = rw.constant(f"{bn.name}_shift", shift.reshape(shape).astype(x.dtype))
    scaled = rw.value_like(f"{bn.name}_scaled", x)
    return [rw.node("Mul", f"{bn.name}_scale", [x, s], [scaled], {}, bn),
            rw.node("Add", f"{bn.name}_shift", [scaled, t], [end], {}, bn)]


# --- folding into a producer: each returns the producer's op type when it rewrote it, else None ---------

def _float_const(v: Value | None) -> bool:
    return v is not None and v.is_const and v.dtype.kind == "f"


def _with_bias(node: Node, rw: Rewriter, scale, shift, index: int = 2) -> Value:
    """The node's bias (input `index`, absent = 0) times scale plus shift, as a new [C] constant."""
    old = node.input(index)
    base = old.data.astype(np.float64).reshape(-1) if old is not None else 0.0
    dtype = old.dtype if old is not None else node.inputs[1].dtype
    return rw.constant(f"{node.name}_bias_folded", (base * scale + shift).astype(dtype))


def _into_conv(node: Node, scale, shift, rw: Rewriter) -> str | None:
    w, bias = node.inputs[1], node.input(2)
    if not _float_const(w) or (bias is not None and not _float_const(bias)) or w.shape[0] != scale.size:
        return None
    data = w.data.astype(np.float64) * scale.reshape(-1, *(1,) * (len(w.shape) - 1))
    node.inputs = [node.inputs[0], rw.constant(f"{w.name}_folded", data.astype(w.dtype)), _with_bias(node, rw, scale, shift)]
    return node.op_type


def _into_conv_transpose(node: Node, scale, shift, rw: Rewriter) -> str | None:
    """ConvTranspose's weight is [C, M / group, k...]: output channel g * M/group + j is w[group g's rows, j]."""
    w, bias = node.inputs[1], node.input(2)
    groups = int(node.attrs.get("group", 1))
    if not _float_const(w) or (bias is not None and not _float_const(bias)) or w.shape[1] * groups != scale.size:
        return None
    grouped = w.data.astype(np.float64).reshape(groups, w.shape[0] // groups, w.shape[1], -1)
    data = (grouped * scale.reshape(groups, 1, w.shape[1], 1)).reshape(w.shape)
    node.inputs = [node.inputs[0], rw.constant(f"{w.name}_folded", data.astype(w.dtype)), _with_bias(node, rw, scale, shift)]
    return node.op_type


def _into_gemm(node: Node, scale, shift, rw: Rewriter) -> str | None:
    """Y = alpha A op(B) + beta C: scale op(B)'s columns; C' = beta C s + t (rows kept if C has them), beta = 1."""
    b, c = node.inputs[1], node.input(2)
    if not _float_const(b) or (c is not None and not _float_const(c)) or len(b.shape) != 2:
        return None
    m, n = node.outputs[0].shape
    if n != scale.size:
        return None
    columns = scale[:, None] if node.attrs.get("transB", 0) else scale[None, :]
    new_b = rw.constant(f"{b.name}_folded", (b.data.astype(np.float64) * columns).astype(b.dtype))
    if c is None:
        new_c = rw.constant(f"{node.name}_bias_folded", shift.astype(b.dtype))
    else:
        full = np.broadcast_to(c.data.astype(np.float64) * float(node.attrs.get("beta", 1.0)), (m, n))
        per_row = ((1, 1) + tuple(c.shape))[-2] != 1
        new_c = rw.constant(f"{c.name}_folded", ((full if per_row else full[0]) * scale + shift).astype(c.dtype))
    node.inputs = [node.inputs[0], new_b, new_c]
    node.attrs["beta"] = 1.0
    return node.op_type


def _into_mat_mul(node: Node, scale, shift, rw: Rewriter) -> str | None:
    """A 2-D float32 product becomes a Gemm (transposes kept) so the shift has a bias to go to."""
    a, b = node.inputs[0], node.inputs[1]
    if len(a.shape) != 2 or len(b.shape) != 2 or a.dtype != np.float32 or not _float_const(b):
        return None
    node.op_type = "Gemm"
    node.attrs = {"alpha": 1.0, "beta": 1.0, "transA": int(node.attrs.get("_trans_a", 0)),
                  "transB": int(node.attrs.get("_trans_b", 0))}
    _into_gemm(node, scale, shift, rw)
    return "MatMul"


FOLD_INTO = {"Conv": _into_conv, "ConvTranspose": _into_conv_transpose, "Gemm": _into_gemm, "MatMul": _into_mat_mul}
