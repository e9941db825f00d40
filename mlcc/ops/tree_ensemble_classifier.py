"""ai.onnx.ml TreeEnsembleClassifier (v1, v3): each row of X [N, F] walks every tree to a leaf and the leaves'
class weights sum per class; Y [N] is the winning label (int64), Z [N, classes] the scores after
`post_transform`.

onnxruntime is the golden, and it has its own reading of two classes: when the weights name one class only
(a binary forest), that class's score is the positive one, compared with 0.5 when every weight is positive
(probabilities: Z = [1 - s, s]) or with 0 otherwise (margins: Z = [-s, s], or their logistic), and
base_values count per class only when there is one per class. Those rules, decided at build time where they
can be, are mirrored exactly. Splits compare and scores accumulate as in TreeEnsembleRegressor. String class
labels are refused with how to avoid them."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._ml import floats, literals, post_transform, refuse_strings
from ._trees import V3_NODE_ATTRS, build_forest_v3, lower_tables, threshold_dtype, tree_report
from .tree_ensemble_regressor import check_x


@register
class TreeEnsembleClassifier(Op):
    op_type = "TreeEnsembleClassifier"
    domain = "ai.onnx.ml"
    attrs = {**V3_NODE_ATTRS, "class_ids": None, "class_nodeids": None, "class_treeids": None, "class_weights": None,
             "class_weights_as_tensor": None, "classlabels_int64s": None, "classlabels_strings": None}

    def _forest(self, node: Node):
        x = check_x(node)
        refuse_strings(node, "classlabels_strings")
        labels = [int(v) for v in node.attrs.get("classlabels_int64s") or []]
        if len(labels) < 2:
            raise UnsupportedError(f"{len(labels)} class labels: at least two are needed", node.where())
        return x, labels, build_forest_v3(node, x.shape[1], "class", len(labels))

    def infer(self, node: Node):
        x, labels, _ = self._forest(node)
        post_transform(node)
        return [(np.int64, (x.shape[0],)), (np.float32, (x.shape[0], len(labels)))]

    def describe(self, node: Node) -> dict:
        x, _, f = self._forest(node)
        return tree_report(f, threshold_dtype(x), threshold_dtype(x))

    def lower(self, node: Node, ctx) -> None:
        x, labels, f = self._forest(node)
        label, z = node.outputs[0], node.outputs[1] if len(node.outputs) > 1 else None
        acc_dtype = threshold_dtype(x)
        classes = len(labels)
        base = floats(node, "base_values", acc_dtype)
        base = np.zeros(0, acc_dtype) if base is None else base
        if len(base) not in ((0, 1, 2) if classes == 2 else (0, classes)):
            raise UnsupportedError(f"{len(base)} base_values for {classes} classes", node.where())
        weights = f.weight_value
        binary_case = classes == 2 and len(set(f.weight_target)) == 1
        scored = f.always_scored()
        seen = None if all(scored) else ctx.scratch(classes, "seen", dtype=np.uint8)
        z_ptr = ctx.ptr(z) if z is not None and z.name else ctx.scratch(classes * x.shape[0] * 4, "scores_out")
        ctx.emit("ops/tree_ensemble.c.j2", kind="classify", x=ctx.ptr(x), x_type=ctx.c_type(x), cmp_type=ctx.c_type(acc_dtype),
                 rows=x.shape[0], features=x.shape[1], targets=classes, trees=len(f.roots),
                 acc=ctx.scratch(classes * acc_dtype.itemsize, "scores", acc_dtype), acc_rows=False,
                 acc_type=ctx.c_type(acc_dtype), out_type="float", z=z_ptr,
                 label=ctx.ptr(label) if label.name else None,
                 labels=ctx.static_array("labels", "int64_t", labels, "classlabels_int64s")
                 if label.name and (classes > 2 or binary_case) else None,
                 base_count=len(base),
                 base=ctx.constant(Value(f"{node.name}_base_values", acc_dtype, base.shape, base)) if len(base) else None,
                 binary_case=binary_case,
                 all_positive=bool(np.all(weights >= 0)),
                 aggregate="sum", seen=seen, post=post_transform(node), fn="f", lit=literals(np.float32),
                 **lower_tables(f, ctx, node.name, acc_dtype, acc_dtype))
