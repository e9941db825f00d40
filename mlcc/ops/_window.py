"""The generalized cosine windows (HannWindow, HammingWindow, BlackmanWindow):
w[n] = a0 - a1 * cos(2 pi n / N) + a2 * cos(4 pi n / N), N = size (periodic, the default) or size - 1.

The size decides the output shape, so it must be known at build time, and the frontend then folds the
window through onnx's reference. The lowering (templates/ops/window.c.j2) computes it in double and
converts to output_datatype, for a node kept on purpose.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op


class CosineWindow(Op):
    attrs = {"periodic": 1, "output_datatype": 1}
    value_dependent_shape = True
    shape_operands = (0,)
    coefficients: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def lower(self, node: Node, ctx) -> None:
        y = node.outputs[0]
        if y.dtype == np.float16 or y.dtype == np.bool_:
            raise UnsupportedError(f"{node.op_type} to {y.dtype.name} is not supported", node.where())
        size = y.size
        period = size if node.attrs["periodic"] else size - 1
        a0, a1, a2 = self.coefficients
        ctx.emit("ops/window.c.j2", y=ctx.ptr(y), c_type=ctx.c_type(y), size=size, a0=repr(a0), a1=repr(a1),
                 a2=repr(a2), step=repr(2.0 * np.pi / period) if period else "0.0")

    def flops(self, node: Node) -> int:
        return 6 * node.outputs[0].size
