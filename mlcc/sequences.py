"""Sequence ops compiled away at build time: a sequence whose length is known while building is a list of
plain tensors, and each sequence op becomes the tensor ops it stands for (Split, Identity, Concat, ...).

A sequence lives in the frontend's values under its name as a `Sequence` (its elements' value names); only
the ops below read it. Positions (SequenceAt, SequenceInsert, SequenceErase) and SplitToSequence's split must
be known at build time; a sequence cannot be a graph input or output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import NodeProto

from .control_flow import _attr, _constant, _node, inline
from .errors import NeedsConstantError, ShapeError, UnsupportedError


@dataclass
class Sequence:
    name: str
    elements: list[str]  # value names, in order
    dtype: int = 0  # the ONNX element type SequenceEmpty declares (0 when the elements say it)


def expanders() -> dict:
    return {"SequenceEmpty": _empty, "SequenceConstruct": _construct, "SequenceInsert": _insert,
            "SequenceErase": _erase, "SequenceAt": _at, "SequenceLength": _length,
            "ConcatFromSequence": _concat, "SplitToSequence": _split, "SequenceMap": _map}


def _sequence(values: dict, name: str, where: str) -> Sequence:
    seq = values.get(name)
    if not isinstance(seq, Sequence):
        raise UnsupportedError(f"input {name!r} is not a sequence mlcc knows at build time", where)
    return seq


def _position(values: dict, name: str, length: int, where: str, insert: bool = False) -> int:
    value = values[name]
    if not value.is_const:
        raise NeedsConstantError(f"its position {name!r} is computed at run time; mlcc compiles sequences away and "
                                 "needs it known at build time", where, name)
    position = int(np.asarray(value.data).reshape(-1)[0])
    top = length if insert else length - 1
    if not -length <= position <= top:
        raise ShapeError(f"position {position} is outside the sequence of length {length}", where)
    return position + length if position < 0 else position


def _bind(values: dict, name: str, seq: Sequence) -> list:
    values[name] = seq
    return []


def _empty(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    return _bind(values, proto.output[0], Sequence(proto.output[0], [], int(_attr(proto, "dtype", 1))))


def _construct(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    return _bind(values, proto.output[0], Sequence(proto.output[0], list(proto.input)))


def _insert(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    seq = _sequence(values, proto.input[0], where)
    n = len(seq.elements)
    at = _position(values, proto.input[2], n, where, insert=True) if len(proto.input) > 2 and proto.input[2] else n
    return _bind(values, proto.output[0], Sequence(proto.output[0], seq.elements[:at] + [proto.input[1]] + seq.elements[at:]))


def _erase(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    seq = _sequence(values, proto.input[0], where)
    if not seq.elements:
        raise ShapeError("erases from an empty sequence", where)
    n = len(seq.elements)
    at = _position(values, proto.input[1], n, where) if len(proto.input) > 1 and proto.input[1] else n - 1
    return _bind(values, proto.output[0], Sequence(proto.output[0], seq.elements[:at] + seq.elements[at + 1:], seq.dtype))


def _at(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    seq = _sequence(values, proto.input[0], where)
    at = _position(values, proto.input[1], len(seq.elements), where)
    return [_node("Identity", [seq.elements[at]], [proto.output[0]], f"{prefix}at")]


def _length(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    seq = _sequence(values, proto.input[0], where)
    return [_constant(proto.output[0], np.array(len(seq.elements), np.int64))]


def _concat(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    seq = _sequence(values, proto.input[0], where)
    if not seq.elements:
        raise ShapeError("concatenates an empty sequence; mlcc needs at least one tensor", where)
    if _attr(proto, "axis") is None:
        raise ShapeError("attribute 'axis' is required", where)
    axis, new_axis = int(_attr(proto, "axis")), int(_attr(proto, "new_axis", 0))
    parts = seq.elements
    items = []
    if new_axis:
        rank = len(values[parts[0]].shape) + 1
        axis = axis + rank if axis < 0 else axis
        axes = f"{prefix}axes"
        items.append(_constant(axes, np.array([axis], np.int64)))
        parts = [f"{prefix}part{i}" for i in range(len(seq.elements))]
        items += [_node("Unsqueeze", [e, axes], [p], f"{prefix}unsqueeze{i}") for i, (e, p) in enumerate(zip(seq.elements, parts))]
    return items + [_node("Concat", parts, [proto.output[0]], f"{prefix}concat", axis=axis)]


def _split(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    data = values[proto.input[0]]
    rank = len(data.shape)
    axis = int(_attr(proto, "axis", 0))
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}", where)
    axis %= rank
    length = data.shape[axis]
    keepdims = int(_attr(proto, "keepdims", 1))
    split_name = proto.input[1] if len(proto.input) > 1 else ""
    if split_name:
        split = values[split_name]
        if not split.is_const:
            raise NeedsConstantError(f"its split {split_name!r} is computed at run time; mlcc compiles sequences away "
                                     "and needs it known at build time", where, split_name)
        given = np.asarray(split.data).astype(np.int64)
        if given.ndim == 0:  # pieces of that size, the last one shorter
            step = int(given)
            if step <= 0:
                raise ShapeError(f"split {step} is not positive", where)
            sizes = [min(step, length - start) for start in range(0, length, step)]
        else:
            sizes = [int(s) for s in given]
            if sum(sizes) != length or any(s < 0 for s in sizes):
                raise ShapeError(f"split {sizes} does not add up to the axis length {length}", where)
        squeeze = False
    else:
        sizes, squeeze = [1] * length, not keepdims
    if not sizes:
        return _bind(values, proto.output[0], Sequence(proto.output[0], [], 0))
    pieces = [f"{prefix}piece{i}" for i in range(len(sizes))]
    items = [_constant(f"{prefix}sizes", np.array(sizes, np.int64)),
             _node("Split", [proto.input[0], f"{prefix}sizes"], pieces, f"{prefix}split", axis=axis)]
    elements = pieces
    if squeeze:
        axes = f"{prefix}axes"
        items.append(_constant(axes, np.array([axis], np.int64)))
        elements = [f"{prefix}element{i}" for i in range(len(sizes))]
        items += [_node("Squeeze", [p, axes], [e], f"{prefix}squeeze{i}") for i, (p, e) in enumerate(zip(pieces, elements))]
    values[proto.output[0]] = Sequence(proto.output[0], elements)
    return items


def _map(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    body = _attr(proto, "body")
    inputs = [values[name] for name in proto.input]
    lengths = {len(v.elements) for v in inputs if isinstance(v, Sequence)}
    if len(lengths) != 1:
        raise ShapeError(f"its input sequences differ in length: {sorted(lengths)}", where)
    count = lengths.pop()
    body_inputs = [i.name for i in body.input]
    outputs: list[list[str]] = [[] for _ in proto.output]
    items = []
    for i in range(count):
        step = f"{prefix}m{i}_"
        bound = {formal: (v.elements[i] if isinstance(v, Sequence) else name)
                 for formal, name, v in zip(body_inputs, proto.input, inputs)}
        body_items, results = inline(body, step, bound, opsets)
        items += body_items
        for k, name in enumerate(results):
            outputs[k].append(name)
    for out, elements in zip(proto.output, outputs):
        if out:
            values[out] = Sequence(out, elements)
    return items

