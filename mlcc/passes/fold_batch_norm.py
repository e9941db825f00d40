"""Fold inference-mode BatchNormalization into the weights of the Conv, ConvTranspose, Gemm or MatMul before it.

With constant statistics BN is y = x * s + t per channel (axis 1): the op says so through
`Op.channel_affine`, which gives s = scale / sqrt(var + epsilon) and t = B - mean * s. Constant per-channel
multiplications, additions, subtractions and divisions right after it (Caffe2 exports put a scale and shift
there) join the same s and t. When the producer's output is read by the BN alone and its op can absorb them
(`Op.fold_scale_shift`: constant weights scaled per output channel, t into the bias; a MatMul of 2-D
float32 operands becomes a Gemm to take that bias), the BN goes. Otherwise (after a Concat, a pool, a graph
input) the BN becomes a Mul and an Add by constant [C,1,...] operands, which later passes fuse into a loop
or an epilogue. Folded values are computed in float64 and stored in the weights' dtype.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ._rewrite import Rewriter, channel_vector

# y = x <role> c applied to the affine map (s, t) by a per-channel constant c; SUB and DIV only with x on the left
ABSORBED = {
    Role.MUL: lambda s, t, c: (s * c, t * c),
    Role.ADD: lambda s, t, c: (s, t + c),
    Role.SUB: lambda s, t, c: (s, t - c),
    Role.DIV: lambda s, t, c: (s / c, t / c),
}
COMMUTATIVE = {Role.MUL, Role.ADD}


def run(graph: Graph) -> dict:
    rw = Rewriter(graph)
    folded: dict[str, int] = {}
    lone = absorbed = 0
    for bn in list(graph.nodes):
        op = ops.of(bn)
        affine = None if op is None or bn.domain or _extra_outputs_read(bn, rw) else op.channel_affine(bn)
        if affine is None:
            continue
        scale, shift, per_activation = affine
        x = bn.inputs[0]
        end, chain = bn.outputs[0], []
        if not per_activation:
            end, chain, scale, shift = _absorb_followers(end, scale, shift, rw)
        producer = rw.producer(x)
        into = producer.op_type if producer is not None else None
        if (producer is not None and not per_activation and rw.sole_reader(x) is bn
                and ops.of(producer).fold_scale_shift(producer, scale, shift, rw.constant)):
            folded[into] = folded.get(into, 0) + 1
            producer.outputs[0] = end
            rw.producers[id(end)] = producer
            rw.drop(bn)
        else:
            rw.replace(bn, _scale_and_shift(bn, x, end, scale, shift, per_activation, rw))
            lone += 1
        for node in chain:
            rw.drop(node)
        absorbed += len(chain)
    rw.finish()
    return {"folded": sum(folded.values()), "into": dict(sorted(folded.items())),
            "to_scale_shift": lone, "absorbed_nodes": absorbed}


def _extra_outputs_read(bn: Node, rw: Rewriter) -> bool:
    """Does anything read the node's outputs after the first (training statistics)?"""
    return any(v.name and rw.is_read(v) for v in bn.outputs[1:])


def _absorb_followers(end: Value, scale, shift, rw: Rewriter):
    """Extend (scale, shift) over the chain of per-channel constant multiplications, additions,
    subtractions and divisions reading the BN's output."""
    chain = []
    while (node := rw.sole_reader(end)) is not None and ops.has_role(node, *ABSORBED):
        if len(node.inputs) != 2 or node.outputs[0].shape != end.shape or node.outputs[0].dtype != end.dtype:
            break
        role = ops.of(node).role
        mine = 0 if node.inputs[0] is end else 1
        other = node.inputs[1 - mine]
        if (mine == 1 and role not in COMMUTATIVE) or not other.is_const or other.dtype != end.dtype:
            break
        c = channel_vector(other, end.shape)
        if c is None or (role is Role.DIV and not np.all(c)):
            break
        scale, shift = ABSORBED[role](scale, shift, c)
        chain.append(node)
        end = node.outputs[0]
    return end, chain, scale, shift


def _scale_and_shift(bn: Node, x: Value, end: Value, scale, shift, per_activation: bool, rw: Rewriter) -> list[Node]:
    """x * s + t with s and t as constants shaped to broadcast along axis 1 (or per activation)."""
    shape = x.shape[1:] if per_activation else (x.shape[1],) + (1,) * (len(x.shape) - 2)
    s = rw.constant(f"{bn.name}_scale", scale.reshape(shape).astype(x.dtype))
    t = rw.constant(f"{bn.name}_shift", shift.reshape(shape).astype(x.dtype))
    scaled = rw.value_like(f"{bn.name}_scaled", x)
    return [rw.node(Role.MUL, f"{bn.name}_scale", [x, s], [scaled], {}, bn),
            rw.node(Role.ADD, f"{bn.name}_shift", [scaled, t], [end], {}, bn)]
