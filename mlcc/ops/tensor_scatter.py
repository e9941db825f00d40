"""TensorScatter (a KV-cache update): out = past_cache, then update's positions along `axis` are written at
write_indices[batch] onwards (0 when omitted). The indices come at run time; mode `circular` wraps positions
around the cache, `linear` skips any position outside it (an invalid index never writes outside)."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import emit_memcpy, normalize_axis
from ._indexing import Nest, add, emit_idle, scaled, strides


@register
class TensorScatter(Op):
    op_type = "TensorScatter"
    attrs = {"axis": -2, "mode": "linear"}
    float16_native = True  # moves bits only

    def lower(self, node: Node, ctx) -> None:
        cache, update, write_indices, out = node.inputs[0], node.inputs[1], node.input(2), node.outputs[0]
        mode = node.attrs["mode"]
        if mode not in ("linear", "circular"):
            raise UnsupportedError(f"mode {mode!r}", node.where())
        axis = normalize_axis(node.attrs["axis"], len(cache.shape), node)
        if axis == 0:
            raise ShapeError("axis 0 is the batch axis; the sequence axis must come after it", node.where())
        emit_memcpy(ctx, out, cache)
        if update.size == 0:
            emit_idle(ctx, [update, write_indices])
            return
        heads = int(np.prod(cache.shape[1:axis], dtype=np.int64))
        nest = Nest.over([cache.shape[0], heads, update.shape[axis]])
        inner = int(np.prod(cache.shape[axis + 1:], dtype=np.int64))
        cache_strides, update_strides = strides(cache), strides(update)
        step = cache_strides[axis]
        # (batch, heads, position) strides of both tensors: heads merge the axes between batch and sequence
        dst = add(nest.index([cache_strides[0], step * cache.shape[axis], 0]), scaled("at", step))
        src = nest.index([update_strides[0], update_strides[axis] * update.shape[axis], update_strides[axis]])
        start = f"{ctx.ptr(write_indices)}[{nest.counter(0)}]" if write_indices is not None else "0"
        position = " + ".join(f"(int64_t){t}" for t in (start, nest.counter(2)) if t != "0") or "0"
        if inner > 1:
            statement = f"memcpy({ctx.ptr(out)} + {dst}, {ctx.ptr(update)} + {src}, {inner * out.dtype.itemsize}u);"
        else:
            statement = f"{ctx.ptr(out)}[{dst}] = {ctx.ptr(update)}[{src}];"
        ctx.emit("ops/tensor_scatter.c.j2", extents=nest.extents, position=position, length=int(cache.shape[axis]),
                 circular=mode == "circular", statement=statement)
