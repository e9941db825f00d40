"""ScatterND: out = data, then each index tuple (the last axis of indices, q long) selects a slice of out (the
data axes after the tuple's) that takes (or is reduced with) the matching slice of updates, tuple by tuple in
order. Tuples are read at run time, wrapped and clamped per axis (see _indexing)."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import emit_memcpy
from ._indexing import Nest, add, emit_idle, emit_indexed, reduction, scaled, strides


@register
class ScatterND(Op):
    op_type = "ScatterND"
    attrs = {"reduction": "none"}

    def lower(self, node: Node, ctx) -> None:
        data, indices, updates, out = node.inputs[0], node.inputs[1], node.inputs[2], node.outputs[0]
        q = int(indices.shape[-1]) if indices.shape else 0
        if not 1 <= q <= len(data.shape):
            raise ShapeError(f"index tuples of {q} do not fit data of rank {len(data.shape)}", node.where())
        emit_memcpy(ctx, out, data)
        tuples = int(np.prod(indices.shape[:-1], dtype=np.int64))
        inner = int(np.prod(data.shape[q:], dtype=np.int64))
        if tuples == 0 or inner == 0:
            emit_idle(ctx, [indices, updates])
            return
        nest = Nest.over([tuples])
        out_strides = strides(out)
        reads = [(f"k{j}", f"{ctx.ptr(indices)}[{add(nest.index([q]), str(j))}]", int(data.shape[j])) for j in range(q)]
        dst = add(*(scaled(f"k{j}", out_strides[j]) for j in range(q)))
        src = nest.index([inner])
        if inner > 1 and node.attrs["reduction"] == "none":
            statement = f"memcpy({ctx.ptr(out)} + {dst}, {ctx.ptr(updates)} + {src}, {inner * out.dtype.itemsize}u);"
            emit_indexed(ctx, nest, reads, statement)
        elif inner > 1:
            statement = reduction(node, f"{ctx.ptr(out)}[{add(dst, 'e')}]", f"{ctx.ptr(updates)}[{add(src, 'e')}]")
            emit_indexed(ctx, nest, reads, statement, inner)
        else:
            emit_indexed(ctx, nest, reads, reduction(node, f"{ctx.ptr(out)}[{dst}]", f"{ctx.ptr(updates)}[{src}]"))
