"""ai.onnx.ml TreeEnsembleRegressor (v1, v3): each row of X [N, F] walks every tree to a leaf, the leaves'
target weights aggregate per target (SUM, AVERAGE, MIN, MAX), base_values are added and Y [N, n_targets]
(float) gets `post_transform`.

As onnxruntime, the golden: splits compare and scores accumulate in double for double X, else in float, a target no tree reaches is 0 under
MIN and MAX, base_values count only when there is one per target and only for targets some leaf scored (the
others are 0), and a single target takes PROBIT but no
other post transform. The forest becomes static tables and one loop walking them (mlcc/ops/_trees.py)."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._copy import fill_literal
from ._ml import floats, literals, numeric_input, post_transform
from ._trees import V3_NODE_ATTRS, build_forest_v3, lower_tables, threshold_dtype, tree_report

AGGREGATES = {"SUM": "sum", "AVERAGE": "average", "MIN": "min", "MAX": "max"}


def check_x(node: Node) -> Value:
    x = numeric_input(node, 0, "fi")
    if len(x.shape) != 2:
        raise UnsupportedError(f"X must be [N, F], not of rank {len(x.shape)}", node.where())
    return x


@register
class TreeEnsembleRegressor(Op):
    op_type = "TreeEnsembleRegressor"
    domain = "ai.onnx.ml"
    attrs = {**V3_NODE_ATTRS, "aggregate_function": "SUM", "n_targets": None, "target_ids": None,
             "target_nodeids": None, "target_treeids": None, "target_weights": None, "target_weights_as_tensor": None}

    def _forest(self, node: Node):
        x = check_x(node)
        if node.attrs["aggregate_function"] not in AGGREGATES:
            raise UnsupportedError(f"aggregate_function {node.attrs['aggregate_function']!r} is not one of "
                                   f"{', '.join(AGGREGATES)}", node.where())
        targets = int(node.attrs.get("n_targets") or max(node.attrs.get("target_ids") or [0]) + 1)
        return x, build_forest_v3(node, x.shape[1], "target", targets)

    def infer(self, node: Node):
        x, f = self._forest(node)
        post_transform(node)
        return [(np.float32, (x.shape[0], f.targets))]

    def describe(self, node: Node) -> dict:
        x, f = self._forest(node)
        return tree_report(f, threshold_dtype(x), threshold_dtype(x))

    def lower(self, node: Node, ctx) -> None:
        x, f = self._forest(node)
        y = node.outputs[0]
        acc_dtype = threshold_dtype(x)
        aggregate = AGGREGATES[node.attrs["aggregate_function"]]
        base = floats(node, "base_values", acc_dtype)
        base = base if base is not None and len(base) == f.targets else None  # as onnxruntime: else unused
        post = post_transform(node)
        if f.targets == 1 and post != "probit":
            post = None  # onnxruntime applies no other transform to a single target
        acc_rows = acc_dtype == np.float32
        ctx.emit("ops/tree_ensemble.c.j2", kind="regress", x=ctx.ptr(x), x_type=ctx.c_type(x), cmp_type=ctx.c_type(acc_dtype),
                 rows=x.shape[0], features=x.shape[1], targets=f.targets, trees=len(f.roots),
                 acc=ctx.ptr(y) if acc_rows else ctx.scratch(f.targets * acc_dtype.itemsize, "scores", acc_dtype),
                 acc_rows=acc_rows, acc_type=ctx.c_type(acc_dtype), out_type="float", y=ctx.ptr(y),
                 base=None if base is None else ctx.constant(Value(f"{node.name}_base_values", acc_dtype, base.shape, base)),
                 aggregate=aggregate, seen=ctx.scratch(f.targets, "seen", dtype=np.uint8)
                 if aggregate in ("min", "max") or (base is not None and not all(f.always_scored())) else None,
                 post=post, fn="f", lit=literals(np.float32),
                 trees_lit=fill_literal(len(f.roots), acc_dtype), **lower_tables(f, ctx, node.name, acc_dtype, acc_dtype))
