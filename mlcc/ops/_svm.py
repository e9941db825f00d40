"""What SVMClassifier and SVMRegressor share: the kernel (LINEAR, POLY, RBF, SIGMOID with kernel_params gamma,
coef0, degree) as the template ops/svm.c.j2 takes it, and the support vectors' table."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from ._copy import fill_literal
from ._ml import numeric_input

KERNELS = {"LINEAR": "linear", "POLY": "poly", "RBF": "rbf", "SIGMOID": "sigmoid"}
SVM_ATTRS = {"coefficients": None, "kernel_params": None, "kernel_type": "LINEAR", "post_transform": "NONE",
             "rho": None, "support_vectors": None}


def rows_features(node: Node) -> tuple[int, int]:
    x = numeric_input(node, 0, "fi")
    if len(x.shape) not in (1, 2):
        raise UnsupportedError(f"X must be [N, F] or [F], not of rank {len(x.shape)}", node.where())
    return (1, x.shape[0]) if len(x.shape) == 1 else x.shape


def floats(node: Node, name: str) -> np.ndarray:
    return np.asarray(node.attrs.get(name) or [], np.float32).reshape(-1)


def kernel_values(node: Node, vectors: int, features: int, ctx) -> dict:
    """The template's kernel arguments; linear mode (no support vectors) leaves sv None."""
    if node.attrs["kernel_type"] not in KERNELS:
        raise UnsupportedError(f"kernel_type {node.attrs['kernel_type']!r} is not one of {', '.join(KERNELS)}",
                               node.where())
    params = [float(v) for v in node.attrs.get("kernel_params") or []] + [0.0, 0.0, 0.0]
    gamma, coef0, degree = params[:3]
    # onnxruntime squares or cubes exactly rather than calling pow
    power = {2.0: "base * base", 3.0: "base * base * base"}.get(degree, f"powf(base, {fill_literal(degree, np.float32)})")
    values = dict(kernel=KERNELS[node.attrs["kernel_type"]] if vectors else "linear",
                  gamma=fill_literal(gamma, np.float32), coef0=fill_literal(coef0, np.float32), power=power,
                  sv=None, k=None, vectors=vectors, features=features)
    if vectors:
        sv = floats(node, "support_vectors")
        if sv.size != vectors * features:
            raise UnsupportedError(f"{sv.size} support vector values for {vectors} vectors of {features} features",
                                   node.where())
        sv = sv.reshape(vectors, features)
        values.update(sv=ctx.constant(Value(f"{node.name}_support_vectors", np.dtype(np.float32), sv.shape, sv)),
                      k=ctx.scratch(vectors * 4, "kernels"))
    return values
