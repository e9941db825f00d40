"""Fold channel permutations (a channel shuffle: Reshape that splits the channel axis, Transpose of the
parts, Reshape back, as in ShuffleNet) into the addressing of the nodes around them instead of copying.

A permutation y[c] = x[order[c]] along the channel axis (the last one channels-last, axis 1 otherwise) goes,
in the first way that works:
- into its producer, when only the permutation reads x and the producer can write its channels in that
  order by reordering its constants (`Op.writes_permuted_channels`: a convolution whose groups keep their
  channels);
- else into its readers: x stays where it is and each reader takes y's channels from where x holds them
  (`Op.reads_permuted_channels`). A reader that computes each channel on its own (a depthwise convolution,
  an elementwise op) FORWARDs the permutation: its per-channel constants are permuted, and its output is
  stored permuted alike, so its readers are asked in turn; a reader that mixes channels ABSORBs it (a
  convolution's weights read the channels where they are, or, for a grouped one whose groups the shuffle
  mixes, the direct kernel reads each group's channels through a table of offsets). Every path must end in
  an absorbing reader, never at a graph output; otherwise the copy stays.

Values stored permuted get new names (`<name>_permuted`), so `mlcc verify --layers` does not compare them
with the model's tensors. Runs after choose_layout (which puts the shuffle's Transpose on the innermost
axes channels-last) and choose_winograd (a convolution with a chosen algorithm other than direct cannot
read through a table).
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import ABSORB, FORWARD, Role
from ..targets import Target
from ._rewrite import Rewriter


class _Permutation:
    """A Reshape -> Transpose -> Reshape chain computing y = x permuted along `axis` (y[c] = x[order[c]])."""

    def __init__(self, nodes: list[Node], x: Value, y: Value, axis: int, order: np.ndarray):
        self.nodes, self.x, self.y, self.axis, self.order = nodes, x, y, axis, order


def _const_reshape(node: Node | None) -> bool:
    return node is not None and ops.has_role(node, Role.RESHAPE) and len(node.inputs) > 1 and node.inputs[1].is_const


def _permutation(rw: Rewriter, split: Node) -> _Permutation | None:
    """The chain starting at `split` if it permutes one axis of its input and nothing else."""
    x, parts = split.inputs[0], split.outputs[0]
    if x.is_const or any(not isinstance(d, int) for d in (*x.shape, *parts.shape)):
        return None
    rank = len(x.shape)
    head = 0  # x.shape[:head] == parts.shape[:head], x.shape[head] split into parts.shape[head:head + n]
    while head < rank and head < len(parts.shape) and x.shape[head] == parts.shape[head]:
        head += 1
    n = len(parts.shape) - rank + 1
    if head >= rank or n < 2 or tuple(parts.shape[head + n:]) != tuple(x.shape[head + 1:]):
        return None
    if math.prod(parts.shape[head:head + n]) != x.shape[head]:
        return None
    swap = rw.sole_reader(parts)
    if swap is None or not ops.has_role(swap, Role.TRANSPOSE) or swap.inputs[0] is not parts:
        return None
    perm = [int(p) for p in swap.attrs.get("perm") or reversed(range(len(parts.shape)))]
    inner = [p - head for p in perm[head:head + n]]
    if perm[:head] != list(range(head)) or perm[head + n:] != list(range(head + n, len(perm))) or sorted(inner) != list(range(n)):
        return None
    merge = rw.sole_reader(swap.outputs[0])
    if not _const_reshape(merge) or merge.inputs[0] is not swap.outputs[0] or merge.outputs[0].shape != x.shape:
        return None
    order = np.arange(x.shape[head]).reshape(parts.shape[head:head + n]).transpose(inner).reshape(-1)
    if np.array_equal(order, np.arange(len(order))):
        return None
    return _Permutation([split, swap, merge], x, merge.outputs[0], head, order)


def _into_producer(rw: Rewriter, p: _Permutation) -> bool:
    producer = rw.producers.get(id(p.x))  # an integer op (mlcc's domain) too: a per-channel Requantize
    if producer is None or len(producer.outputs) != 1 or rw.sole_reader(p.x) is not p.nodes[0]:
        return False
    op = ops.of(producer)
    if op is None or not op.writes_permuted_channels(producer, p.order, p.axis):
        return False
    op.write_permuted_channels(producer, p.order, p.axis, rw.constant)
    producer.outputs[0] = p.y
    for node in p.nodes:
        rw.drop(node)
    return True


def _plan(rw: Rewriter, value: Value, p: _Permutation, target: Target, steps: list) -> bool:
    """Collect (node, input index, answer) for every reader of `value` (stored permuted), through the
    forwarding ones; False when some path ends anywhere but at an absorbing reader."""
    if id(value) in rw.outputs:
        return False
    for reader in rw.readers_of(value):
        for index, v in enumerate(reader.inputs):
            if v is not value:
                continue
            op = ops.of(reader)
            answer = None if op is None or reader.domain else op.reads_permuted_channels(reader, index, p.order, p.axis, target)
            if answer is None:
                return False
            steps.append((reader, index, answer))
            if answer == FORWARD and not _plan(rw, reader.outputs[0], p, target, steps):
                return False
    return True


def _into_readers(rw: Rewriter, p: _Permutation, target: Target) -> dict | None:
    steps: list = []
    if not _plan(rw, p.y, p, target, steps):
        return None
    stored = {id(p.y): p.x}  # a value the readers read -> where it is stored, permuted
    done = {"absorbed": 0, "forwarded": 0}
    for reader, index, answer in steps:
        op = ops.of(reader)
        op.read_permuted_channels(reader, index, p.order, p.axis, rw.constant)
        reader.inputs[index] = stored[id(reader.inputs[index])]
        if answer == FORWARD:
            out = reader.outputs[0]
            permuted = Value(rw.fresh(f"{out.name}_permuted"), out.dtype, out.shape)
            reader.outputs[0] = permuted
            stored[id(out)] = permuted
        done["absorbed" if answer == ABSORB else "forwarded"] += 1
    for node in p.nodes:
        rw.drop(node)
    return done


def run(graph: Graph, target: Target) -> dict:
    counts = {"into_producers": 0, "into_readers": 0, "forwarded": 0, "copied": 0}
    while True:  # one fold at a time: each changes who reads what
        rw = Rewriter(graph)
        chains = [c for c in (_permutation(rw, n) for n in graph.nodes if _const_reshape(n)) if c is not None]
        for chain in chains:
            if _into_producer(rw, chain):
                counts["into_producers"] += 1
                break
            done = _into_readers(rw, chain, target)
            if done is not None:
                counts["into_readers"] += 1
                counts["forwarded"] += done["forwarded"]
                break
        else:
            counts["copied"] = len(chains)
            return counts
        rw.finish()
