"""Run convolutional regions channels-last (NHWC) on targets whose `conv_layout` says so.

NHWC makes a 1x1 convolution a plain GEMM over the activations read in place (rows are pixels), gathers a
KxK convolution's columns as whole pixel runs, and puts the channels innermost for depthwise convolutions
and pooling, so their loops vectorise across channels.

A region is a connected set of nodes on 4-D tensors whose ops say they can run channels-last
(`Op.runs_channels_last`: today Conv with constant weights, the float32 pools and the 8-bit MaxPool, LRN,
elementwise ops whose runtime operands all have the output's shape (QuantizedAdd and Requantize too), Concat on
the channel axis, the integer QuantizedConv and the per-tensor QuantizeLinear / DequantizeLinear between them;
and `Op.runs_channels_last_on` the target: int8 convolutions and 8-bit MaxPool only where the target has
channels-last int8 kernels on its ISA), linked through the inputs
carrying activations (`Op.activation_inputs`), holding at least one seed (`Op.channels_last_seed`: Conv,
QuantizedConv, a pool). Its nodes switch in place (`Op.to_channels_last`: Conv, the pools and LRN get `layout="NHWC"`,
Concat's axis becomes 3), every value they produce becomes [N, H, W, C], and constant operands are permuted
at build time as each reader reads them (`Op.channels_last_constant`: a per-channel [C, 1, 1] becomes [C]).
Transposes are inserted only where a value crosses the region's boundary (graph inputs and outputs, readers
that cannot run channels-last); one that is the inverse of the Transpose producing its input reads that
Transpose's input instead, and a Transpose that only moves dims of extent 1 is a Reshape (a view in the
memory plan). A boundary node that is no seed moves out of the region where the value on its other side is
smaller (a graph input's QuantizeLinear: its 8-bit output is transposed, not the float input). A producer
outside the region whose output only the region reads and that can store it transposed itself
(`Op.writes_transposed`: a per-tensor QuantizeLinear) writes it channels-last in its own pass, no Transpose.

A channel shuffle (Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose [0, 2, 1, 3, 4], Reshape back to
[N, C, H, W], as in ShuffleNet) joins the region too: channels-last it is the same three nodes on
[N, H, W, g, C/g], one Transpose of the innermost two dims, instead of three Transposes of whole tensors (on
float32 or, between integer ops, 8-bit values; the grouped 1x1 QuantizedConv before it runs channels-last).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ..ops._layout import NHWC, to_channels_last
from ..targets import Target
from ._rewrite import Rewriter

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]
SHUFFLE_PERM, SHUFFLE_PERM_NHWC = [0, 2, 1, 3, 4], [0, 1, 2, 4, 3]


def _capable(node: Node, target: Target) -> bool:
    """Can the node join a region (its op's Op.runs_channels_last on a 4-D output, and on this target)?"""
    op = ops.of(node)
    if op is None or not node.outputs or len(node.outputs[0].shape) != 4:
        return False
    return op.runs_channels_last(node) and op.runs_channels_last_on(node, target)


def _channel_shuffles(rw: Rewriter) -> dict[int, str]:
    """The nodes of each channel shuffle on a [N, C, H, W] value (float32, or 8-bit between integer ops): id ->
    "split", "swap" or "merge"."""
    roles: dict[int, str] = {}
    for split in rw.graph.nodes:
        if not ops.has_role(split, Role.RESHAPE):
            continue
        x, parts = split.inputs[0], split.outputs[0]
        if len(x.shape) != 4 or len(parts.shape) != 5:
            continue
        n, c, h, w = x.shape
        if parts.shape[0] != n or parts.shape[3:] != (h, w) or parts.shape[1] * parts.shape[2] != c:
            continue
        swap = rw.sole_reader(parts)
        if swap is None or not ops.has_role(swap, Role.TRANSPOSE) or swap.inputs[0] is not parts:
            continue
        if [int(p) for p in swap.attrs.get("perm") or []] != SHUFFLE_PERM:
            continue
        merge = rw.sole_reader(swap.outputs[0])
        if merge is None or not ops.has_role(merge, Role.RESHAPE) or merge.outputs[0].shape != x.shape:
            continue
        roles.update({id(split): "split", id(swap): "swap", id(merge): "merge"})
    return roles


def _regions(graph: Graph, shuffles: dict[int, str], target: Target) -> list[list[Node]]:
    """Connected groups of capable nodes (linked by the values one produces and another reads) holding a seed."""
    capable = [n for n in graph.nodes if _capable(n, target) or id(n) in shuffles]
    parent = {id(n): id(n) for n in capable}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    producer = {id(v): n for n in capable for v in n.outputs}
    for n in capable:
        for i in ops.of(n).activation_inputs(n):
            p = producer.get(id(n.inputs[i]))
            if p is not None:
                parent[find(id(n))] = find(id(p))
    groups: dict[int, list[Node]] = {}
    for n in capable:
        groups.setdefault(find(id(n)), []).append(n)
    return [g for g in groups.values() if any(ops.of(n).channels_last_seed for n in g)]


def _nbytes(v: Value) -> int:
    return v.size * v.dtype.itemsize


def _narrow_boundaries(rw: Rewriter, inside: set[int], shuffles: dict[int, str]) -> int:
    """Move the region's boundary across a node that is no seed and reads one activation where the relayout is
    cheaper on its other side: a QuantizeLinear reading a graph input then runs channel-major and its 8-bit
    output is transposed, not the float input (a quarter of the bytes, in the arena and copied); a
    DequantizeLinear whose output leaves the region is transposed before it widens. Returns the nodes left out."""
    left_out, changed = 0, True
    while changed:
        changed = False
        for node in rw.graph.nodes:
            if id(node) not in inside or id(node) in shuffles or ops.of(node).channels_last_seed:
                continue
            reads = ops.of(node).activation_inputs(node)
            if len(reads) != 1 or len(node.outputs) != 1:
                continue
            x, y = node.inputs[reads[0]], node.outputs[0]
            producer = rw.producers.get(id(x))
            x_outside = producer is None or id(producer) not in inside
            y_readers = rw.readers_of(y)
            y_outside = rw.is_read(y) and not any(id(r) in inside for r in y_readers)
            if (x_outside and _nbytes(y) < _nbytes(x)) or (y_outside and not x_outside and _nbytes(y) > _nbytes(x)):
                inside.discard(id(node))
                left_out += 1
                changed = True
    return left_out


def _moves_only_unit_dims(shape: tuple[int, ...], perm: list[int]) -> bool:
    kept = [a for a in perm if shape[a] != 1]
    return kept == sorted(kept)


def run(graph: Graph, target: Target) -> dict:
    layout = target.conv_layout
    if layout != NHWC:
        return {"layout": layout, "regions": 0}
    rw = Rewriter(graph)
    shuffles = _channel_shuffles(rw)
    regions = _regions(graph, shuffles, target)
    inside = {id(n) for r in regions for n in r}
    left_out = _narrow_boundaries(rw, inside, shuffles)
    if not inside:
        return {"layout": layout, "regions": 0}
    outputs = {id(v) for v in graph.outputs}
    nhwc: dict[int, Value] = {}  # original value -> its channels-last form
    consts: dict[tuple[int, tuple[int, ...]], Value] = {}
    counts = {"nodes": 0, "transposes": 0, "reshapes": 0, "cancelled": 0, "shuffles": 0, "left_at_boundary": left_out,
              "written_transposed": 0}
    nodes: list[Node] = []

    def relayout(v: Value, perm: list[int], out: Value, like: Node) -> Node:
        if _moves_only_unit_dims(v.shape, perm):
            counts["reshapes"] += 1
            shape = rw.constant(f"{out.name}_shape", np.array(out.shape, dtype=np.int64))
            return rw.node(Role.RESHAPE, f"{out.name}_reshape", [v, shape], [out], {"allowzero": 0}, like)
        counts["transposes"] += 1
        return rw.node(Role.TRANSPOSE, f"{out.name}_transpose", [v], [out], {"perm": perm}, like)

    def writes_channels_last(producer: Node, v: Value) -> bool:
        """Can the producer of a value entering the region store it channels-last itself? Only when the
        region alone reads it (the channel-major form is then never needed)."""
        op = ops.of(producer)
        return (op is not None and op.writes_transposed(producer) and len(producer.outputs) == 1
                and id(v) not in outputs and all(id(r) in inside for r in rw.readers_of(v)))

    def channels_last(v: Value, reader: Node) -> Value:
        if v.is_const:
            data = ops.of(reader).channels_last_constant(reader, v.data)
            key = (id(v), data.shape)
            if key not in consts:
                consts[key] = rw.constant(f"{v.name}_nhwc", data)
            return consts[key]
        if id(v) not in nhwc:  # produced outside the region: change its layout once, where it is read first
            source = rw.producer(v, Role.TRANSPOSE)
            if source is not None and [int(p) for p in source.attrs.get("perm") or []] == TO_NCHW:
                counts["cancelled"] += 1
                nhwc[id(v)] = source.inputs[0]
            else:
                out = Value(rw.fresh(f"{v.name}_nhwc"), v.dtype, to_channels_last(v.shape))
                producer = rw.producers.get(id(v))
                if producer is not None and writes_channels_last(producer, v):
                    ops.of(producer).write_transposed(producer, TO_NHWC)
                    producer.outputs[producer.outputs.index(v)] = out
                    counts["written_transposed"] += 1
                else:
                    nodes.append(relayout(v, TO_NHWC, out, reader))
                nhwc[id(v)] = out
        return nhwc[id(v)]

    for node in graph.nodes:
        if id(node) not in inside:
            nodes.append(node)
            continue
        role = shuffles.get(id(node))
        for i in ops.of(node).activation_inputs(node) if role is None else [0]:
            node.inputs[i] = channels_last(node.inputs[i], node)
        if role == "swap":
            node.attrs["perm"] = SHUFFLE_PERM_NHWC
            counts["shuffles"] += 1
        if role is None:
            ops.of(node).to_channels_last(node)
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
            readers = rw.readers_of(v)
            if id(v) in outputs or any(id(r) not in inside for r in readers):
                nodes.append(relayout(inner, TO_NCHW, v, node))
    graph.nodes = nodes
    return {"layout": layout, "regions": len(regions), **counts}
