"""GatherElements: out[i...] = data[i... with axis i_axis replaced by indices[i...]]. One loop nest over the
indices' shape; indices come at run time (int32 or int64) and are wrapped and clamped (see _indexing)."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._copy import normalize_axis
from ._indexing import Nest, add, emit_indexed, scaled, strides


@register
class GatherElements(Op):
    op_type = "GatherElements"
    variable_extents = True  # a loop nest over run-time extents (ops/_indexing.py)
    attrs = {"axis": 0}
    float16_native = True  # moves bits only

    def reference(self, node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        # onnx.reference's np.choose takes at most 64 choices along the axis and goes wrong past them
        data, indices = inputs
        axis = normalize_axis(node.attrs["axis"], data.ndim, node)
        size = data.shape[axis]
        if indices.size and (indices.min() < -size or indices.max() >= size):
            raise IndexError(f"an index is outside [-{size}, {size - 1}] on axis {axis}")
        # off the axis, indices may be shorter than data: out[i...] reads data at the same i there
        data = data[tuple(slice(None) if d == axis else slice(0, n) for d, n in enumerate(indices.shape))]
        return [np.take_along_axis(data, np.where(indices < 0, indices + size, indices).astype(np.int64), axis)]

    def lower(self, node: Node, ctx) -> None:
        data, indices, out = node.inputs[0], node.inputs[1], node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(data.shape), node)
        nest = Nest.over(indices.shape)
        at = nest.index(strides(indices))
        data_strides = strides(data)
        src = add(nest.index(data_strides, skip=axis), scaled("k", data_strides[axis]))
        emit_indexed(ctx, nest, [("k", f"{ctx.ptr(indices)}[{at}]", data.shape[axis])],
                     f"{ctx.ptr(out)}[{at}] = {ctx.ptr(data)}[{src}];")
