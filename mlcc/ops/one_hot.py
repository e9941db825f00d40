"""OneHot: the output is indices' shape with a `depth` axis inserted at `axis`; element d along it is on_value
where the index (negative counts from the end) equals d, else off_value. `depth` decides the shape, so it must
be known at build time; indices and values may come at run time."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import const_ints, fill_literal, normalize_axis
from ._indexing import Nest


@register
class OneHot(Op):
    op_type = "OneHot"
    attrs = {"axis": -1}

    def infer(self, node: Node):
        const_ints(node, 1, "depth")
        return None

    def lower(self, node: Node, ctx) -> None:
        indices, values, out = node.inputs[0], node.inputs[2], node.outputs[0]
        depth = const_ints(node, 1, "depth")[0]
        if depth <= 0:
            raise ShapeError(f"depth {depth} is not positive", node.where())
        axis = normalize_axis(node.attrs["axis"], len(out.shape), node)
        if indices.dtype == np.float16:  # stored as raw bits: C comparisons are wrong
            raise UnsupportedError("float16 indices", node.where())
        outer = int(np.prod(indices.shape[:axis], dtype=np.int64))
        inner = int(np.prod(indices.shape[axis:], dtype=np.int64))
        nest = Nest.over([outer, depth, inner])
        at = f"{ctx.ptr(indices)}[{nest.index([inner, 0, 1])}]"
        floats = indices.dtype.kind == "f"
        if values.is_const:
            off, on = (fill_literal(v, out.dtype) for v in np.asarray(values.data).reshape(-1)[:2])
        else:
            off, on = "off", "on"
        ctx.emit("ops/one_hot.c.j2", values=None if values.is_const else ctx.ptr(values), c_type=ctx.c_type(out),
                 extents=nest.extents, index=at, read=at if floats else "", index_type=ctx.c_type(indices),
                 depth=depth, counter=nest.counter(1), out=f"{ctx.ptr(out)}[{nest.index([depth * inner, inner, 1])}]",
                 off=off, on=on)
