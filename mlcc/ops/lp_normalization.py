"""LpNormalization: x divided by its L1 or L2 norm along `axis` (default -1); a zero vector stays zero, as in
onnxruntime. Rendered by templates/ops/lp_normalization.c.j2 over the [outer, n, inner] view.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import normalize_axis

DTYPES = ("float32", "float64")


@register
class LpNormalization(Op):
    op_type = "LpNormalization"
    attrs = {"axis": -1, "p": 2}

    def infer(self, node: Node):
        x = node.inputs[0]
        return [(x.dtype, x.shape)]

    def flops(self, node: Node) -> int:
        return 3 * node.inputs[0].size

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype.name not in DTYPES:
            raise UnsupportedError(f"LpNormalization on {x.dtype.name} is not supported yet", node.where())
        p = int(node.attrs["p"])
        if p not in (1, 2):
            raise UnsupportedError(f"p = {p} (LpNormalization defines 1 and 2)", node.where())
        if x.size == 0:
            return
        axis = normalize_axis(int(node.attrs["axis"]), len(x.shape), node)
        n = int(x.shape[axis])
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        ctype = ctx.c_type(x)
        f = "f" if ctype == "float" else ""
        ctx.emit("ops/lp_normalization.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctype, outer=outer, n=n,
                 inner=inner, block=n * inner, term=f"fabs{f}(v)" if p == 1 else "v * v",
                 norm="acc" if p == 1 else f"sqrt{f}(acc)")
