"""Range: start, start + delta, ... below limit. Its length depends on the input values, so mlcc needs them
at build time; then the frontend folds it. The lowering serves a node kept on purpose: it recomputes
start + i * delta, as the ONNX definition does."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import fill_literal


@register
class Range(Op):
    op_type = "Range"
    value_dependent_shape = True
    shape_operands = (0, 1, 2)

    def lower(self, node: Node, ctx) -> None:
        out = node.outputs[0]
        if not all(v.is_const for v in node.inputs):
            raise UnsupportedError("Range over run-time values", node.where())
        start, _, delta = (np.asarray(v.data).reshape(-1)[0] for v in node.inputs)
        ctx.emit("ops/range.c.j2", out=ctx.ptr(out), c_type=ctx.c_type(out), count=out.size,
                 start=fill_literal(start, out.dtype), delta=fill_literal(delta, out.dtype))
