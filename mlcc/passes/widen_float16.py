"""Compute float16 in float32: every node that reads or writes float16 and whose op does not declare
`float16_native` gets its float16 inputs converted to float32 (constants at build time, run-time values by
a Cast node), computes in float32, and has its float16 outputs rounded back by a Cast node.

This is what ONNX Runtime's CPU provider does for most ops and what onnx's reference does per op (numpy
computes half arithmetic in single precision and rounds the result), so results agree to float16's
precision. Targets without native half arithmetic (all of mlcc's today) need exactly this.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role

HALF, SINGLE = np.dtype("float16"), np.dtype("float32")


def run(graph: Graph) -> dict:
    widened: dict[int, Value] = {}  # float16 value -> its float32 twin
    nodes, count = [], 0
    for node in graph.nodes:
        op = ops.of(node)
        touches_half = any(v is not None and v.dtype == HALF for v in [*node.inputs, *node.outputs])
        if not touches_half or op is None or op.float16_native:
            nodes.append(node)
            continue
        count += 1
        for i, v in enumerate(node.inputs):
            if v is None or v.dtype != HALF:
                continue
            if id(v) not in widened:
                twin = Value(f"{v.name}__f32", SINGLE, v.shape)
                if v.is_const:
                    twin.data = np.asarray(v.data, dtype=SINGLE)
                else:
                    nodes.append(_cast(v, twin, node))
                widened[id(v)] = twin
            node.inputs[i] = widened[id(v)]
        rounded = []
        for i, v in enumerate(node.outputs):
            if v.dtype == HALF:
                twin = Value(f"{v.name}__f32", SINGLE, v.shape)
                node.outputs[i] = twin
                rounded.append(_cast(twin, v, node))  # rounded each time, as onnx's reference does
        nodes.append(node)
        nodes.extend(rounded)
    graph.nodes = nodes
    return {"widened_nodes": count}


def _cast(src: Value, dst: Value, beside: Node) -> Node:
    cast = ops.for_role(Role.CAST)
    to = TensorProto.FLOAT16 if dst.dtype == HALF else TensorProto.FLOAT
    proto = helper.make_node(cast.op_type, [src.name], [dst.name], to=to)
    where = f"node {beside.name!r} ({cast.op_type})"
    return Node(cast.op_type, f"{beside.name}__to_{dst.dtype.name}_{src.name}", [src], [dst],
                cast.parse_attrs(proto, where), "", 19)
