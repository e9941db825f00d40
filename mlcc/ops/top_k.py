"""TopK: the k largest (or smallest) elements along an axis and their int64 indices, best first; equal
elements keep their input order (the lower index first), as ONNX specifies. k is attribute `k` before opset
10, then input 1, which must be known at build time. Each lane keeps its best k so far sorted in the output
itself and inserts each new element by shifting the worse ones down. Rendered by templates/ops/top_k.c.j2.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import const_ints, normalize_axis

DTYPES = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@register
class TopK(Op):
    op_type = "TopK"
    attrs = {"axis": -1, "largest": 1, "sorted": 1, "k": None}

    def geometry(self, node: Node) -> tuple[int, int]:
        """(axis, k), checked against the input's shape."""
        x = node.inputs[0]
        axis = normalize_axis(int(node.attrs["axis"]), len(x.shape), node)
        if node.opset < 10:
            k = node.attrs.get("k")
            if k is None:
                raise UnsupportedError("attribute 'k' is required", node.where())
        else:
            given = const_ints(node, 1, "k")
            if given is None or len(given) != 1:
                raise ShapeError("the k input must hold one value", node.where())
            k = given[0]
        if not 0 <= k <= x.shape[axis]:
            raise ShapeError(f"k = {k} is out of range for an axis of {x.shape[axis]} elements", node.where())
        return axis, int(k)

    def infer(self, node: Node):
        x = node.inputs[0]
        axis, k = self.geometry(node)
        shape = (*x.shape[:axis], k, *x.shape[axis + 1:])
        return [(x.dtype, shape), (np.dtype("int64"), shape)]

    def flops(self, node: Node) -> int:
        return node.inputs[0].size

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        values, indices = node.outputs
        if x.dtype.name not in DTYPES:
            raise UnsupportedError(f"TopK on {x.dtype.name} is not supported yet", node.where())
        axis, k = self.geometry(node)
        if values.size == 0:
            return
        n = int(x.shape[axis])
        outer = int(np.prod(x.shape[:axis], dtype=np.int64))
        inner = int(np.prod(x.shape[axis + 1:], dtype=np.int64))
        ctx.emit("ops/top_k.c.j2", x=ctx.ptr(x), values=ctx.ptr(values), indices=ctx.ptr(indices),
                 ctype=ctx.c_type(x), outer=outer, n=n, k=k, inner=inner, block=n * inner, out_block=k * inner,
                 better=">" if node.attrs["largest"] else "<")
