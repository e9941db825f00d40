"""Run convolutional regions channels-last (NHWC) on targets whose `conv_layout` says so.

NHWC makes a 1x1 convolution a plain GEMM over the activations read in place (rows are pixels), gathers a
KxK convolution's columns as whole pixel runs, and puts the channels innermost for depthwise convolutions
and pooling, so their loops vectorise across channels.

A region is a connected set of layout-capable nodes on 4-D float tensors (Conv with constant weights, the
float32 pools, LRN, elementwise ops whose runtime operands all have the output's shape, Concat on the channel
axis) holding at least one Conv or pool. Its nodes switch in place: Conv, the pools and LRN get
`layout="NHWC"`, Concat's axis becomes 3, every value they produce becomes [N, H, W, C], and constant
operands are permuted at build time (a per-channel [C, 1, 1] becomes [C]). Transposes are inserted only
where a value crosses the region's boundary (graph inputs and outputs, readers that are not
layout-capable); one that is the inverse of the Transpose producing its input reads that Transpose's input
instead, and a Transpose that only moves dims of extent 1 is a Reshape (a view in the memory plan).

A channel shuffle (Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose [0, 2, 1, 3, 4], Reshape back to
[N, C, H, W], as in ShuffleNet) joins the region too: channels-last it is the same three nodes on
[N, H, W, g, C/g], one Transpose of the innermost two dims, instead of three Transposes of whole tensors.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops._layout import NHWC, to_channels_last
from ._rewrite import Rewriter

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
SEEDS = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}
ACROSS_CHANNELS = {"LRN"}  # not seeds, but read the channels where attr `layout` says
DEFAULT_LAYOUT = "NCHW"
SHUFFLE_PERM, SHUFFLE_PERM_NHWC = [0, 2, 1, 3, 4], [0, 1, 2, 4, 3]


def _activation_inputs(node: Node) -> list[int]:
    """The input indices that carry N, C, H, W activations (Conv's weights and bias stay as they are)."""
    if node.op_type == "Conv":
        return [i for i in (0, 3) if node.input(i) is not None]
    if node.op_type in SEEDS:
        return [0]
    return [i for i, v in enumerate(node.inputs) if v is not None]


def _capable(node: Node) -> bool:
    if node.domain or not node.outputs or len(node.outputs[0].shape) != 4:
        return False
    y, x = node.outputs[0], node.inputs[0]
    floats = all(v.dtype == np.float32 for v in [*node.outputs, *(node.inputs[i] for i in _activation_inputs(node))])
    if node.op_type == "Conv":
        w, bias, residual = node.inputs[1], node.input(2), node.input(3)
        return (floats and len(x.shape) == 4 and w.is_const and (bias is None or bias.is_const)
                and (residual is None or residual.shape == y.shape) and not x.is_const)
    if node.op_type in SEEDS or node.op_type in ACROSS_CHANNELS:
        return floats and len(node.outputs) == 1 and len(x.shape) == 4 and not x.is_const
    if node.op_type == "Concat":
        return int(node.attrs.get("axis", 0)) in (1, -3) and all(len(v.shape) == 4 for v in node.inputs)
    op = ops.lookup(node.op_type, node.domain)
    if op is None or not op.elementwise or len(node.outputs) != 1:
        return False
    runtime = [v for v in node.inputs if v is not None and not v.is_const]
    return bool(runtime) and all(v.shape == y.shape for v in runtime) and all(
        len(v.shape) <= 4 for v in node.inputs if v is not None)


def _permuted_constant(data: np.ndarray, keep_rank: bool) -> np.ndarray:
    """A constant broadcast against N, C, H, W, as one broadcast against N, H, W, C (leading 1s dropped
    unless keep_rank: Concat's operands keep theirs)."""
    full = data.reshape((1,) * (4 - data.ndim) + data.shape).transpose(TO_NHWC)
    shape = list(full.shape)
    while not keep_rank and len(shape) > 1 and shape[0] == 1:
        shape.pop(0)
    return np.ascontiguousarray(full.reshape(shape))


def _channel_shuffles(rw: Rewriter) -> dict[int, str]:
    """The nodes of each channel shuffle on a float32 [N, C, H, W] value: id -> "split", "swap" or "merge"."""
    roles: dict[int, str] = {}
    for split in rw.graph.nodes:
        if split.op_type != "Reshape" or split.domain:
            continue
        x, parts = split.inputs[0], split.outputs[0]
        if x.dtype != np.float32 or len(x.shape) != 4 or len(parts.shape) != 5:
            continue
        n, c, h, w = x.shape
        if parts.shape[0] != n or parts.shape[3:] != (h, w) or parts.shape[1] * parts.shape[2] != c:
            continue
        swap = rw.sole_consumer(parts)
        if swap is None or swap.op_type != "Transpose" or swap.domain or swap.inputs[0] is not parts:
            continue
        if [int(p) for p in swap.attrs.get("perm") or []] != SHUFFLE_PERM:
            continue
        merge = rw.sole_consumer(swap.outputs[0])
        if merge is None or merge.op_type != "Reshape" or merge.domain or merge.outputs[0].shape != x.shape:
            continue
        roles.update({id(split): "split", id(swap): "swap", id(merge): "merge"})
    return roles


def _regions(graph: Graph, shuffles: dict[int, str]) -> list[list[Node]]:
    """Connected groups of capable nodes (linked by the values one produces and another reads) holding a seed."""
    capable = [n for n in graph.nodes if _capable(n) or id(n) in shuffles]
    parent = {id(n): id(n) for n in capable}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    producer = {id(v): n for n in capable for v in n.outputs}
    for n in capable:
        for i in _activation_inputs(n):
            p = producer.get(id(n.inputs[i]))
            if p is not None:
                parent[find(id(n))] = find(id(p))
    groups: dict[int, list[Node]] = {}
    for n in capable:
        groups.setdefault(find(id(n)), []).append(n)
    return [g for g in groups.values() if any(n.op_type in SEEDS for n in g)]


def _moves_only_unit_dims(shape: tuple[int, ...], perm: list[int]) -> bool:
    kept = [a for a in perm if shape[a] != 1]
    return kept == sorted(kept)


def run(graph: Graph) -> dict:
    target = getattr(graph, "target", None)
    layout = getattr(target, "conv_layout", DEFAULT_LAYOUT)
    if layout != NHWC:
        return {"layout": layout, "regions": 0}
    rw = Rewriter(graph)
    shuffles = _channel_shuffles(rw)
    regions = _regions(graph, shuffles)
    inside = {id(n) for r in regions for n in r}
    if not inside:
        return {"layout": layout, "regions": 0}
    outputs = {id(v) for v in graph.outputs}
    nhwc: dict[int, Value] = {}  # original value -> its channels-last form
    consts: dict[tuple[int, bool], Value] = {}
    counts = {"nodes": 0, "transposes": 0, "reshapes": 0, "cancelled": 0, "shuffles": 0}
    nodes: list[Node] = []

    def relayout(v: Value, perm: list[int], out: Value, like: Node) -> Node:
        if _moves_only_unit_dims(v.shape, perm):
            counts["reshapes"] += 1
            shape = rw.constant(f"{out.name}_shape", np.array(out.shape, dtype=np.int64))
            return rw.node("Reshape", f"{out.name}_reshape", [v, shape], [out], {"allowzero": 0}, like)
        counts["transposes"] += 1
        return rw.node("Transpose", f"{out.name}_transpose", [v], [out], {"perm": perm}, like)

    def channels_last(v: Value, reader: Node) -> Value:
        if v.is_const:
            key = (id(v), reader.op_type == "Concat")
            if key not in consts:
                consts[key] = rw.constant(f"{v.name}_nhwc", _permuted_constant(v.data, key[1]))
            return consts[key]
        if id(v) not in nhwc:  # produced outside the region: change its layout once, where it is read first
            source = rw.producer.get(id(v))
            if (source is not None and source.op_type == "Transpose" and not source.domain
                    and [int(p) for p in source.attrs.get("perm") or []] == TO_NCHW):
                counts["cancelled"] += 1
                nhwc[id(v)] = source.inputs[0]
            else:
                out = Value(rw.fresh(f"{v.name}_nhwc"), v.dtype, to_channels_last(v.shape))
                nodes.append(relayout(v, TO_NHWC, out, reader))
                nhwc[id(v)] = out
        return nhwc[id(v)]

    for node in graph.nodes:
        if id(node) not in inside:
            nodes.append(node)
            continue
        role = shuffles.get(id(node))
        for i in _activation_inputs(node) if role is None else [0]:
            node.inputs[i] = channels_last(node.inputs[i], node)
        if role == "swap":
            node.attrs["perm"] = SHUFFLE_PERM_NHWC
            counts["shuffles"] += 1
        if node.op_type in SEEDS or node.op_type in ACROSS_CHANNELS:
            node.attrs["layout"] = NHWC
        if node.op_type == "Concat":
            node.attrs["axis"] = 3
        nodes.append(node)
        counts["nodes"] += 1
        for k, v in enumerate(node.outputs):
            # a shuffle's [N, g, C/g, H, W] parts (or their swap) become [N, H, W, g, C/g]
            split = role in ("split", "swap")
            shape = (v.shape[0], *v.shape[3:], *v.shape[1:3]) if split else to_channels_last(v.shape)
            inner = Value(rw.fresh(f"{v.name}_nhwc"), v.dtype, shape)
            if role in ("split", "merge"):
                node.inputs[1] = rw.constant(f"{node.name}_nhwc_shape", np.array(shape, dtype=np.int64))
            node.outputs[k] = inner
            nhwc[id(v)] = inner
            readers = rw.consumers.get(id(v), [])
            if id(v) in outputs or any(id(r) not in inside for r in readers):
                nodes.append(relayout(inner, TO_NCHW, v, node))
    graph.nodes = nodes
    return {"layout": layout, "regions": len(regions), **counts}
