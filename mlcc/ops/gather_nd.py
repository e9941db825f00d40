"""GatherND: each index tuple (the last axis of indices, q long) picks a slice of data, after `batch_dims`
leading axes that data and indices share. One loop over batches and tuples; each tuple is read at run time,
wrapped and clamped per axis (see _indexing), and its slice (the data axes after the tuple's) is copied."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._indexing import Nest, add, emit_indexed, scaled, strides


def _prod(dims) -> int:
    return int(np.prod([int(d) for d in dims], dtype=np.int64))


@register
class GatherND(Op):
    op_type = "GatherND"
    attrs = {"batch_dims": 0}
    float16_native = True  # moves bits only

    def lower(self, node: Node, ctx) -> None:
        data, indices, out = node.inputs[0], node.inputs[1], node.outputs[0]
        b, q = int(node.attrs["batch_dims"]), int(indices.shape[-1]) if indices.shape else 0
        if not 0 <= b < len(indices.shape) or not 1 <= q <= len(data.shape) - b:
            raise ShapeError(f"an index tuple of {q} with batch_dims {b} does not fit data of rank {len(data.shape)}",
                             node.where())
        tuples, inner = _prod(indices.shape[b:-1]), _prod(data.shape[b + q:])
        nest = Nest.over([_prod(indices.shape[:b]), tuples])
        first = nest.index([tuples * q, q])
        data_strides = strides(data)
        reads = [(f"k{j}", f"{ctx.ptr(indices)}[{add(first, str(j))}]", int(data.shape[b + j])) for j in range(q)]
        src = add(nest.index([_prod(data.shape[b:]), 0]), *(scaled(f"k{j}", data_strides[b + j]) for j in range(q)))
        dst = nest.index([tuples * inner, inner])
        if inner > 1:
            statement = f"memcpy({ctx.ptr(out)} + {dst}, {ctx.ptr(data)} + {src}, {inner * out.dtype.itemsize}u);"
        else:
            statement = f"{ctx.ptr(out)}[{dst}] = {ctx.ptr(data)}[{src}];"
        emit_indexed(ctx, nest, reads, statement)
