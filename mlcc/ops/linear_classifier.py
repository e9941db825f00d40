"""ai.onnx.ml LinearClassifier: scores Z = X . coefficients^T + intercepts in float, one per class row of
coefficients; the label Y is the best class's (first on ties), or for a single score row, the second label
when the score is positive. As onnxruntime: the post transform applies to two or more scores; a single one
takes PROBIT, or becomes [1 - s, s] when there are two labels (s through the logistic first under LOGISTIC). String labels are refused."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._ml import post_transform, refuse_strings
from .linear_regressor import emit, rows_features, weights


@register
class LinearClassifier(Op):
    op_type = "LinearClassifier"
    domain = "ai.onnx.ml"
    attrs = {"classlabels_ints": None, "classlabels_strings": None, "coefficients": None, "intercepts": None,
             "multi_class": 0, "post_transform": "NONE"}

    def _shape(self, node: Node) -> tuple[int, int, list[int]]:
        refuse_strings(node, "classlabels_strings")
        rows, features = rows_features(node)
        labels = [int(v) for v in node.attrs.get("classlabels_ints") or []]
        scores = len(node.attrs.get("intercepts") or []) or len(labels)  # onnxruntime counts the intercepts
        if scores < 1 or (scores > 1 and len(labels) != scores):
            raise UnsupportedError(f"{len(labels)} class labels for {scores} score rows", node.where())
        weights(node, scores, features)
        return rows, scores, labels

    def infer(self, node: Node):
        rows, scores, labels = self._shape(node)
        post_transform(node)
        return [(np.int64, (rows,)), (np.float32, (rows, 2 if scores == 1 and len(labels) == 2 else scores))]

    def flops(self, node: Node) -> int:
        rows, scores, _ = self._shape(node)
        return 2 * rows * scores * rows_features(node)[1]

    def lower(self, node: Node, ctx) -> None:
        rows, scores, labels = self._shape(node)
        label, z = node.outputs[0], node.outputs[1] if len(node.outputs) > 1 else None
        post = post_transform(node)
        complement = scores == 1 and len(labels) == 2
        stride = 2 if complement else scores
        out = ctx.ptr(z) if z is not None and z.name else ctx.scratch(rows * stride * 4, "scores")
        use_labels = label.name and (scores > 1 or len(labels) == 2)
        emit(ctx, node, scores, out, stride, label=ctx.ptr(label) if label.name else None,
             labels=ctx.static_array("labels", "int64_t", labels, "classlabels_ints") if use_labels else None,
             post=post, single="probit" if post == "probit" else "complement" if complement else None)
