"""ReverseSequence: for each batch b (along batch_axis), the first sequence_lens[b] steps along time_axis come
out in reverse order and the others unchanged. Lengths come at run time and are clamped to the time axis."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._indexing import Nest, add, scaled, strides


@register
class ReverseSequence(Op):
    op_type = "ReverseSequence"
    attrs = {"batch_axis": 1, "time_axis": 0}
    float16_native = True  # moves bits only

    def lower(self, node: Node, ctx) -> None:
        x, lengths, out = node.inputs[0], node.inputs[1], node.outputs[0]
        batch_axis, time_axis = int(node.attrs["batch_axis"]), int(node.attrs["time_axis"])
        if len(x.shape) < 2 or {batch_axis, time_axis} != {0, 1}:
            raise ShapeError(f"batch_axis {batch_axis} and time_axis {time_axis} must be 0 and 1 of a tensor of "
                             "rank 2 or more", node.where())
        nest = Nest.over(x.shape[:2])
        x_strides = strides(x)
        dst = nest.index(x_strides[:2])
        src = add(nest.index(x_strides[:2], skip=time_axis), scaled("s", x_strides[time_axis]))
        inner = int(np.prod(x.shape[2:], dtype=np.int64))
        if inner > 1:
            statement = f"memcpy({ctx.ptr(out)} + {dst}, {ctx.ptr(x)} + {src}, {inner * out.dtype.itemsize}u);"
        else:
            statement = f"{ctx.ptr(out)}[{dst}] = {ctx.ptr(x)}[{src}];"
        ctx.emit("ops/reverse_sequence.c.j2", extents=nest.extents, steps=int(x.shape[time_axis]),
                 length=f"{ctx.ptr(lengths)}[{nest.counter(batch_axis)}]", time=nest.counter(time_axis),
                 statement=statement)
