"""ai.onnx.ml Imputer: in X [N, C] (or [C]) of float or int64, each value equal to replaced_value_float /
replaced_value_int64 (a NaN replaced value: each NaN) becomes its column's imputed value, given one per column
or one for all."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._copy import fill_literal


@register
class Imputer(Op):
    op_type = "Imputer"
    domain = "ai.onnx.ml"
    attrs = {"imputed_value_floats": None, "imputed_value_int64s": None, "replaced_value_float": 0.0,
             "replaced_value_int64": 0}
    elementwise = True
    in_place = True

    def _params(self, node: Node):
        x = node.inputs[0]
        floating = x.dtype.kind == "f"
        if x.dtype not in (np.float32, np.float64, np.int64):
            raise UnsupportedError(f"X of type {x.dtype.name}: float, double or int64 only", node.where())
        name = "imputed_value_floats" if floating else "imputed_value_int64s"
        values = np.asarray(node.attrs.get(name) or [], x.dtype)
        columns = x.shape[-1] if x.shape else 1
        if values.size not in (1, columns):
            raise UnsupportedError(f"{values.size} {name} for {columns} columns", node.where())
        replaced = node.attrs["replaced_value_float" if floating else "replaced_value_int64"]
        return x, columns, values, replaced

    def infer(self, node: Node):
        x = self._params(node)[0]
        return [(x.dtype, x.shape)]

    def lower(self, node: Node, ctx) -> None:
        x, columns, values, replaced = self._params(node)
        imputed = fill_literal(values[0], x.dtype) if values.size == 1 else \
            ctx.constant(Value(f"{node.name}_imputed", x.dtype, values.shape, values)) + "[i]"
        ctx.emit("ops/imputer.c.j2", x=ctx.ptr(x), y=ctx.ptr(node.outputs[0]), c_type=ctx.c_type(x),
                 rows=x.size // max(columns, 1), columns=columns, imputed=imputed,
                 nan=x.dtype.kind == "f" and np.isnan(replaced), replaced=fill_literal(replaced, x.dtype))
