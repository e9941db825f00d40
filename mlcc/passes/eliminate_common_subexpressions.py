"""Common-subexpression elimination: a node computing what an earlier node already computes (same op, domain,
opset, attributes and inputs) goes, and its readers read the earlier node's outputs. Constants compare by
value: equal constants merge first (one copy in the weights blob), so nodes reading equal weights match.
"""

from __future__ import annotations

import hashlib
from collections import Counter

import numpy as np

from ..ir import Graph, Node, Value


def run(graph: Graph) -> dict:
    subst: dict[int, Value] = {}  # id(value) -> the equal value that replaces it
    constants: dict[tuple, list[Value]] = {}
    checked: set[int] = set()  # constants compared once
    digests: dict[int, str] = {}
    seen: dict[tuple, Node] = {}
    kept, merged = [], Counter()
    merged_constants = 0
    for node in graph.nodes:
        inputs = []
        for v in node.inputs:
            v = subst.get(id(v), v) if v is not None else None
            if v is not None and v.is_const and id(v) not in checked:
                checked.add(id(v))
                same = _equal_constant(v, constants, digests)
                if same is not v:
                    subst[id(v)] = same
                    merged_constants += 1
                v = same
            inputs.append(v)
        node.inputs = inputs
        key = _key(node)
        first = seen.get(key) if key is not None else None
        if first is None:
            if key is not None:
                seen[key] = node
            kept.append(node)
            continue
        for mine, theirs in zip(node.outputs, first.outputs):
            subst[id(mine)] = theirs
        merged[node.op_type] += 1
    graph.nodes = kept
    graph.outputs = [subst.get(id(v), v) for v in graph.outputs]
    return {"merged_nodes": sum(merged.values()), "by_op": dict(sorted(merged.items())),
            "merged_constants": merged_constants}


def _key(node: Node) -> tuple | None:
    """What the node computes; None when it cannot be compared (an attribute with no stable form)."""
    try:
        attrs = tuple(sorted((name, _frozen(value)) for name, value in node.attrs.items()))
        hash(attrs)
    except TypeError:
        return None
    return (node.op_type, node.domain, node.opset, attrs, tuple(id(v) if v is not None else None for v in node.inputs),
            tuple(bool(v.name) for v in node.outputs))


def _frozen(value):
    if isinstance(value, np.ndarray):
        return ("tensor", value.dtype.str, value.shape, hashlib.sha1(_bytes(value)).hexdigest())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if hasattr(value, "SerializeToString"):  # an ONNX message (a graph, a type proto)
        return ("proto", value.SerializeToString())
    return value


def _bytes(data: np.ndarray):
    """The values' bytes without a copy (strings: their values, not object pointers)."""
    if data.dtype.kind in "OUS":
        return repr(data.tolist()).encode()
    return np.ascontiguousarray(data).reshape(-1).view(np.uint8)


def _equal_constant(value: Value, constants: dict[tuple, list[Value]], digests: dict[int, str]) -> Value:
    """The first constant seen with the same dtype, shape and bytes as `value` (or `value` itself). Bytes are
    hashed only when another constant has the same dtype and shape."""
    bucket = constants.setdefault((value.dtype.str, value.shape), [])
    for other in bucket:
        if _digest(other, digests) == _digest(value, digests) and np.array_equal(_bytes(other.data), _bytes(value.data)):
            return other
    bucket.append(value)
    return value


def _digest(value: Value, digests: dict[int, str]) -> str:
    if id(value) not in digests:
        digests[id(value)] = hashlib.sha1(_bytes(value.data)).hexdigest()
    return digests[id(value)]
