"""CumSum and CumProd: running sums (products) along the axis given by input 1, optionally exclusive (each
output leaves out its own element) and reversed (running from the end). Viewed as [outer, n, inner], each
output row is the previous output row combined with one input row, so the innermost loop stays contiguous.
Rendered by templates/ops/cum_sum.c.j2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import cexpr
from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register_family
from ._copy import const_ints, fill_literal, normalize_axis

DTYPES = ("float32", "float64", "int32", "int64", "uint32", "uint64")


@dataclass(frozen=True)
class Row:
    combine: str  # C operator joining the previous output and an input element
    identity: int  # the first output of an exclusive scan


TABLE = {
    "CumSum": Row("+", 0),
    "CumProd": Row("*", 1),
}


def _make(op_type: str, row: Row) -> type[Op]:
    class CumulativeOp(Op):
        variable_extents = True  # its loops run over run-time extents (a position id is a running count)
        parameter_operands = (1,)  # the axis
        attrs = {"exclusive": 0, "reverse": 0}

        def infer(self, node: Node):
            x = node.inputs[0]
            return [(x.dtype, x.shape)]

        def flops(self, node: Node) -> int:
            return node.inputs[0].size

        def lower(self, node: Node, ctx) -> None:
            x, y = node.inputs[0], node.outputs[0]
            if x.dtype.name not in DTYPES:
                raise UnsupportedError(f"{op_type} on {x.dtype.name} is not supported yet", node.where())
            axes = const_ints(node, 1, "axis")
            if axes is None or len(axes) != 1:
                raise ShapeError("the axis input must hold one value", node.where())
            if x.size == 0:
                return
            rank = len(x.shape)
            axis = normalize_axis(axes[0], rank, node) if rank else 0
            shape = x.shape or (1,)
            n = shape[axis]
            outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
            reverse, exclusive = bool(node.attrs["reverse"]), bool(node.attrs["exclusive"])
            first_at = f"{cexpr.literal((n - 1) * inner)} + i" if reverse and not cexpr.is_one(n) else "i"
            ctx.emit("ops/cum_sum.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctx.c_type(x), outer=outer, n=n,
                     inner=inner, block=n * inner, first_at=first_at, combine=row.combine, exclusive=exclusive,
                     identity=fill_literal(row.identity, x.dtype),
                     r=f"{cexpr.literal(n - 1)} - s" if reverse else "s", prev="r + 1u" if reverse else "r - 1u",
                     direction="from the end" if reverse else "from the start")

    CumulativeOp.op_type = op_type
    CumulativeOp.__name__ = CumulativeOp.__qualname__ = op_type
    return CumulativeOp


register_family(_make, TABLE)
