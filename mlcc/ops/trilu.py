"""Trilu: keeps the upper (column - row >= k) or lower (column - row <= k) triangle of the last two axes and
zeroes the rest. k may come at run time."""

from __future__ import annotations

import numpy as np

from .. import cnames
from ..ir import Node
from . import Op, register
from ._copy import fill_literal
from ._indexing import Nest


@register
class Trilu(Op):
    op_type = "Trilu"
    attrs = {"upper": 1}
    float16_native = True  # moves bits only

    def lower(self, node: Node, ctx) -> None:
        x, k, out = node.inputs[0], node.input(1), node.outputs[0]
        rows, cols = int(x.shape[-2]), int(x.shape[-1])
        nest = Nest.over([x.size // (rows * cols), rows, cols])
        at = nest.index([rows * cols, cols, 1])
        diagonal = " - ".join(f"(int64_t){c}" for c in (nest.counter(2), nest.counter(1)) if c != "0") or "0"
        if k is None or k.is_const:
            bound = cnames.int_literal(int(np.asarray(k.data).reshape(-1)[0])) if k is not None else "0"
            k_read = ""
        else:
            bound, k_read = "k", f"{ctx.ptr(k)}[0]"
        keep = f"{diagonal} {'>=' if node.attrs['upper'] else '<='} {bound}"
        ctx.emit("ops/trilu.c.j2", k_read=k_read, extents=nest.extents, keep=keep, out=f"{ctx.ptr(out)}[{at}]",
                 x=f"{ctx.ptr(x)}[{at}]", zero=fill_literal(0, out.dtype))
