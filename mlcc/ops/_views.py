"""Strided views: which elements of a tensor an op's output is, when it copies nothing but picks them by
strides (Transpose, the reshapes, Gather of one index, Slice, Expand). passes/recognise_attention follows
an attention's operands back through such nodes (`Op.strided_view`) and its result forward
(`Op.input_view`), so the fused node reads and writes the tensors around them in place."""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from ..ir import Node, Value


@dataclass
class View:
    """Elements of `value` seen at offset + sum(index * strides) with the given shape."""
    value: Value
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]


def contiguous(value: Value) -> View:
    strides, step = [], 1
    for d in reversed(value.shape):
        strides.append(step)
        step *= d
    return View(value, 0, tuple(value.shape), tuple(reversed(strides)))


def reshape_strides(shape, strides, new_shape) -> tuple[int, ...] | None:
    """Strides showing a strided view of `shape` as `new_shape` without a copy (numpy's rule), or None."""
    if prod(shape) != prod(new_shape) or prod(shape) == 0:
        return None
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    new = list(new_shape)
    out = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(old):
        n_size, o_size = new[ni], old[oi][0]
        while n_size != o_size:
            if n_size < o_size:
                n_size *= new[nj]
                nj += 1
            else:
                o_size *= old[oj][0]
                oj += 1
        if any(old[k][1] != old[k + 1][0] * old[k + 1][1] for k in range(oi, oj - 1)):
            return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    return tuple(out)


def reshaped(node: Node, view: View) -> View | None:
    """The output of a node relabelling its input's shape, given the input's view."""
    out = node.outputs[0]
    strides = reshape_strides(view.shape, view.strides, out.shape)
    return None if strides is None else View(view.value, view.offset, tuple(out.shape), strides)


def unreshaped(node: Node, view: View) -> View | None:
    """The input of a node relabelling its input's shape, given the output's view."""
    data = node.inputs[0]
    strides = reshape_strides(view.shape, view.strides, data.shape)
    return None if strides is None else View(view.value, view.offset, tuple(data.shape), strides)


def const_ints(value: Value | None) -> list[int] | None:
    """A constant's integers, None where they are not known at build time (or vary with the run-time sizes:
    a view must be the same bytes at every size)."""
    if value is None or not value.is_const or value.dtype.kind not in "iu" or value.variable_data is not None:
        return None
    return [int(i) for i in value.data.reshape(-1)]
