"""ai.onnx.ml SVMRegressor: Y [N, 1] = coefficients . K(x, support vectors) + rho[0], or coefficients . x +
rho[0] without support vectors (n_supports 0); one_class makes it +1 / -1. In float, as onnxruntime, which
applies no post transform."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._copy import fill_literal
from ._svm import SVM_ATTRS, floats, kernel_values, rows_features


@register
class SVMRegressor(Op):
    op_type = "SVMRegressor"
    domain = "ai.onnx.ml"
    attrs = {**SVM_ATTRS, "n_supports": 0, "one_class": 0}

    def _check(self, node: Node):
        rows, features = rows_features(node)
        vectors = int(node.attrs["n_supports"])
        coef, rho = floats(node, "coefficients"), floats(node, "rho")
        if coef.size != (vectors or features) or rho.size < 1:
            raise UnsupportedError(f"{coef.size} coefficients and {rho.size} rho for "
                                   f"{vectors or features} {'support vectors' if vectors else 'features'}", node.where())
        return rows, features, vectors, coef, rho

    def infer(self, node: Node):
        rows = self._check(node)[0]
        return [(np.float32, (rows, 1))]

    def lower(self, node: Node, ctx) -> None:
        rows, features, vectors, coef, rho = self._check(node)
        ctx.emit("ops/svm.c.j2", kind="regress", x=ctx.ptr(node.inputs[0]), x_type=ctx.c_type(node.inputs[0]),
                 rows=rows, y=ctx.ptr(node.outputs[0]), one_class=bool(node.attrs["one_class"]),
                 coef=ctx.constant(Value(f"{node.name}_coefficients", np.dtype(np.float32), coef.shape, coef)),
                 rho0=fill_literal(rho[0], np.float32), **kernel_values(node, vectors, features, ctx))
