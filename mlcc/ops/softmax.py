"""Softmax and LogSoftmax on the f32-softmax kernels, numerically stable (the max is subtracted first).

Before opset 13 the input is coerced to 2-D at `axis` (default 1) and normalised over the flattened
trailing dims; from 13 on it is normalised along the one dim `axis` (default -1). Both views are
[outer, n, inner]: contiguous rows when inner is 1, else the strided kernel across inner. double takes
plain loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import numpy as np

from .. import cexpr
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, Role, register_family


@dataclass(frozen=True)
class Row:
    rows_kernel: str
    strided_kernel: str
    flops: int  # per element: compare, subtract, exp, add, then scale or subtract


TABLE = {
    "Softmax": Row("mlcc_f32_softmax_rows", "mlcc_f32_softmax_strided", 5),
    "LogSoftmax": Row("mlcc_f32_logsoftmax_rows", "mlcc_f32_logsoftmax_strided", 5),
}


ROLES = {"Softmax": Role.SOFTMAX}


def softmax_view(node: Node) -> tuple[int, int, int]:
    """(outer, n, inner): the input as [outer, n, inner], normalised along n."""
    shape = node.inputs[0].shape
    rank = max(len(shape), 1)
    axis = node.attrs.get("axis")
    if axis is None:
        axis = 1 if node.opset < 13 else -1
    if not -rank <= axis < rank:
        raise UnsupportedError(f"axis {axis} is out of range for rank {len(shape)}", node.where())
    axis %= rank
    if node.opset < 13:
        return prod(shape[:axis]), prod(shape[axis:]), 1
    return prod(shape[:axis]), prod(shape[axis:axis + 1]), prod(shape[axis + 1:])


def _make(op_type: str, row: Row) -> type[Op]:
    class SoftmaxOp(Op):
        attrs = {"axis": None}  # its default depends on the opset
        role = ROLES.get(op_type)
        vector_families = ("f32-softmax",)
        quantized_form = "softmax" if op_type == "Softmax" else None  # a QuantizedSoftmax between DQ and Q
        variable_extents = True  # the kernels take their sizes at run time; scratch for the largest

        def lower(self, node: Node, ctx) -> None:
            x, y = node.inputs[0], node.outputs[0]
            outer, n, inner = softmax_view(node)
            if x.dtype == np.float64:
                ctx.emit("ops/softmax_loops.c.j2", outer=outer, n=n, inner=inner, x=ctx.ptr(x), y=ctx.ptr(y),
                         row=n * inner, o=cexpr.index("o", outer), i=cexpr.index("i", inner),
                         at=cexpr.offset(None, ("j", inner)),
                         ctype="double", exp="exp", log="log", log_softmax=op_type == "LogSoftmax")
                return
            if x.dtype != np.float32:
                raise UnsupportedError(f"{op_type} on {x.dtype.name} is not supported (float32 and double only)", node.where())
            ctx.use_kernels("f32-softmax")
            if cexpr.is_one(inner):
                ctx.emit("ops/softmax.c.j2", kernel=ctx.kernel(row.rows_kernel), sizes=[outer, n],
                         x=ctx.ptr(x), y=ctx.ptr(y), work=None)
            else:
                work = ctx.scratch(2 * inner * 4, "max_sum")  # a max and a sum per inner position
                ctx.emit("ops/softmax.c.j2", kernel=ctx.kernel(row.strided_kernel), sizes=[outer, n, inner],
                         x=ctx.ptr(x), y=ctx.ptr(y), work=work)

        def flops(self, node: Node) -> int:
            return row.flops * node.inputs[0].size

    SoftmaxOp.op_type = op_type
    SoftmaxOp.__name__ = SoftmaxOp.__qualname__ = op_type
    return SoftmaxOp


register_family(_make, TABLE)
