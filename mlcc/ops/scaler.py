"""ai.onnx.ml Scaler: Y = (X - offset) * scale in float, each of offset and scale one value per column of
X's last axis or a single value for all."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._copy import fill_literal
from ._ml import numeric_input


@register
class Scaler(Op):
    op_type = "Scaler"
    domain = "ai.onnx.ml"
    attrs = {"offset": None, "scale": None}
    elementwise = True

    def _params(self, node: Node):
        x = numeric_input(node, 0, "fi")
        columns = x.shape[-1] if x.shape else 1
        params = {}
        for name, default in (("offset", 0.0), ("scale", 1.0)):
            values = np.asarray(node.attrs.get(name) or [default], np.float32)
            if values.size not in (1, columns):
                raise UnsupportedError(f"{values.size} {name} values for {columns} columns", node.where())
            params[name] = values
        return x, columns, params

    def infer(self, node: Node):
        x, _, _ = self._params(node)
        return [(np.float32, x.shape)]

    def lower(self, node: Node, ctx) -> None:
        x, columns, params = self._params(node)
        spelled = {name: fill_literal(v[0], np.float32) if v.size == 1 else
                   ctx.constant(Value(f"{node.name}_{name}", np.dtype(np.float32), v.shape, v)) + "[i]"
                   for name, v in params.items()}
        ctx.emit("ops/scaler.c.j2", x=ctx.ptr(x), x_type=ctx.c_type(x), y=ctx.ptr(node.outputs[0]),
                 rows=x.size // max(columns, 1), columns=columns, **spelled)
