"""GlobalMaxPool and GlobalAveragePool: one max / mean per (n, c) plane, over every spatial element."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register_family
from ._layout import LayoutAttribute, is_channels_last

TABLE = {
    "GlobalMaxPool": "mlcc_f32_pool_global_max",
    "GlobalAveragePool": "mlcc_f32_pool_global_avg",
}


def _make(op_type: str, kernel: str) -> type[Op]:
    class GlobalPool(LayoutAttribute, Op):
        vector_families = ("f32-pool",)
        quantized_form = "average" if op_type == "GlobalAveragePool" else None  # as AveragePool's (ops/average_pool)

        def lower(self, node: Node, ctx) -> None:
            x, y = node.inputs[0], node.outputs[0]
            if x.dtype != np.float32:
                raise UnsupportedError(f"{op_type} on {x.dtype.name} is not supported yet (float32 only)", node.where())
            if len(x.shape) < 2:
                raise UnsupportedError(f"{op_type} needs an input of rank 2 or more, not {len(x.shape)}", node.where())
            ctx.use_kernels("f32-pool")
            if is_channels_last(node):  # N[D][H]WC (passes/choose_layout): y is N x C
                ctx.emit("ops/global_pool.c.j2", kernel=ctx.kernel(f"{kernel}_nhwc"),
                         planes=f"{x.shape[0]}u, {x.size // (x.shape[0] * x.shape[-1])}", size=x.shape[-1],
                         x=ctx.ptr(x), y=ctx.ptr(y))
                return
            planes = int(x.shape[0] * x.shape[1])
            ctx.emit("ops/global_pool.c.j2", kernel=ctx.kernel(kernel), planes=planes, size=x.size // max(planes, 1),
                     x=ctx.ptr(x), y=ctx.ptr(y))

        def flops(self, node: Node) -> int:
            return node.inputs[0].size

    GlobalPool.op_type = op_type
    GlobalPool.__name__ = GlobalPool.__qualname__ = op_type
    return GlobalPool


register_family(_make, TABLE)
