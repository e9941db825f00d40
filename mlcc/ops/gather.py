"""Gather along any axis. Constant indices in arithmetic progression (a single index is one) make a
strided copy; other constant indices go in a table; run-time indices are wrapped (negative counts from
the end) and clamped, so an invalid index never reads outside the data. int32 and int64 indices.
"""

from __future__ import annotations

import math

import numpy as np

from ..cexpr import VariableExtentError, is_variable, offset
from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import Region, emit_regions, normalize_axis
from ._views import View, const_ints


def _progression(indices: list[int]) -> int | None:
    """The common step of `indices` if they are in arithmetic progression."""
    step = indices[1] - indices[0] if len(indices) > 1 else 0
    return step if all(b - a == step for a, b in zip(indices, indices[1:])) else None


@register
class Gather(Op):
    op_type = "Gather"
    attrs = {"axis": 0}
    variable_extents = True  # run-time indices over a run-time count (an embedding lookup over a sequence)

    def strided_view(self, node: Node, view: View) -> View | None:
        """One constant index: the input with that axis fixed (or kept with extent 1)."""
        out = node.outputs[0]
        index = const_ints(node.input(1))
        if index is None or len(index) != 1:
            return None
        axis = node.attrs.get("axis", 0) % len(view.shape)
        i = index[0] % view.shape[axis]
        keep = node.inputs[1].shape  # () drops the axis, (1,) keeps it with size 1
        shape = view.shape[:axis] + tuple(keep) + view.shape[axis + 1:]
        strides = view.strides[:axis] + (0,) * len(keep) + view.strides[axis + 1:]
        result = View(view.value, view.offset + i * view.strides[axis], shape, strides)
        return result if shape == tuple(out.shape) else None

    def lower(self, node: Node, ctx) -> None:
        data, indices, out = node.inputs[0], node.inputs[1], node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(data.shape), node)
        outer = math.prod(data.shape[:axis])
        dim = data.shape[axis]
        inner = math.prod(data.shape[axis + 1:])
        count = indices.size
        table = None
        if indices.is_const and (is_variable(dim) or is_variable(count)):
            # constant indices over a run-time axis, or stored at the maximum and read as far as the size
            # reaches (mlcc/extents.py): a non-negative progression that stays inside the axis at every size
            given = [int(i) for i in indices.data.reshape(-1)]
            step = _progression(given)
            if step is None or not given or given[0] < 0 or step < 0 or not given[0] + step * (count - 1) < dim:
                raise VariableExtentError(f"constant indices of {indices.name!r} are not an increasing progression "
                                          "inside the axis at every size")
            region = Region([outer, count, inner], [count * inner, inner, 1], [dim * inner, step * inner, 1],
                            src_offset=given[0] * inner)
            emit_regions(ctx, out, data, [(region, "constant indices, evenly spaced")])
            return
        if indices.is_const:
            given = [int(i) for i in indices.data.reshape(-1)]
            if any(not -dim <= i < dim for i in given):
                raise ShapeError(f"an index is out of range for an axis of {dim}", node.where())
            wrapped = [i % dim for i in given]
            step = _progression(wrapped)
            if step is not None:
                region = Region([outer, count, inner], [count * inner, inner, 1], [dim * inner, step * inner, 1],
                                src_offset=wrapped[0] * inner if wrapped else 0)
                emit_regions(ctx, out, data, [(region, "constant indices, evenly spaced")])
                return
            c_type = "int32_t" if dim < 2**31 else "int64_t"
            table = ctx.static_array("indices", c_type, wrapped, f"{node.name} indices, wrapped")
        if out.size == 0:  # nothing to move; keep the compiler quiet about the unused pointers
            idle = [ctx.ptr(v) for v in (out, data, indices) if not v.is_const]
            ctx.emit("ops/copy.c.j2", regions=[], fill="", idle=idle)
            return
        itemsize = np.dtype(out.dtype).itemsize
        loops = ([outer] if outer > 1 else []) + [count]
        outer_index = "i0" if outer > 1 else 0
        j = f"i{len(loops) - 1}"
        dst_index = offset(None, (outer_index, count * inner), (j, inner))
        src_index = offset(None, (outer_index, dim * inner), ("(size_t)k", inner))
        ctx.emit("ops/gather.c.j2", loops=loops, j=j, dim=dim, last=dim - 1, wrap=table is None,
                 indices=table or ctx.ptr(indices), dst=ctx.ptr(out), src=ctx.ptr(data),
                 dst_index=dst_index, src_index=src_index, run_bytes=inner * itemsize if inner > 1 else 0)
