"""ScatterElements (and its opset 9-10 name, Scatter): out = data, then for each index position i...,
out[i... with axis i_axis replaced by indices[i...]] (reduced with) updates[i...], in order, so a repeated
index keeps the last update (reduction none) or combines them all (add, mul, max, min)."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._copy import emit_memcpy, normalize_axis
from ._indexing import Nest, add, emit_idle, emit_indexed, reduction, scaled, strides


@register
class ScatterElements(Op):
    op_type = "ScatterElements"
    attrs = {"axis": 0, "reduction": "none"}

    def lower(self, node: Node, ctx) -> None:
        data, indices, updates, out = node.inputs[0], node.inputs[1], node.inputs[2], node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(data.shape), node)
        emit_memcpy(ctx, out, data)
        if indices.size == 0:
            emit_idle(ctx, [indices, updates])
            return
        nest = Nest.over(indices.shape)
        at = nest.index(strides(indices))
        out_strides = strides(out)
        dst = add(nest.index(out_strides, skip=axis), scaled("k", out_strides[axis]))
        emit_indexed(ctx, nest, [("k", f"{ctx.ptr(indices)}[{at}]", int(data.shape[axis]))],
                     reduction(node, f"{ctx.ptr(out)}[{dst}]", f"{ctx.ptr(updates)}[{at}]"))


@register
class Scatter(ScatterElements):
    op_type = "Scatter"
    attrs = {"axis": 0}
