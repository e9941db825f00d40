"""ai.onnx.ml SVMClassifier, as onnxruntime computes it (in float, X converted):
- without support vectors (linear mode, e.g. LinearSVC): a score per class, coefficients[c] . x + rho[0];
  the label is the best class's, with two classes the second's when its score passes 0 (0.5 when every
  coefficient is positive); the post transform applies to the class scores;
- with support vectors (libsvm's SVC): one-vs-one, a decision value per pair of classes from both classes'
  support vectors, each pair voting; the label is the class with the most votes (the first on ties). Z is the
  pair scores (for two classes [-s, s], under LOGISTIC their logistic, under SOFTMAX [1 - s, s]), or with prob_a/prob_b each pair's Platt probability
  coupled into class probabilities (libsvm's multiclass_probability: up to 100 iterations).
String labels are refused."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._copy import fill_literal
from ._ml import literals, post_transform, refuse_strings
from ._svm import SVM_ATTRS, floats, kernel_values, rows_features


@register
class SVMClassifier(Op):
    op_type = "SVMClassifier"
    domain = "ai.onnx.ml"
    attrs = {**SVM_ATTRS, "classlabels_ints": None, "classlabels_strings": None, "prob_a": None, "prob_b": None,
             "vectors_per_class": None}

    def _check(self, node: Node):
        refuse_strings(node, "classlabels_strings")
        rows, features = rows_features(node)
        labels = [int(v) for v in node.attrs.get("classlabels_ints") or []]
        classes = len(labels)
        per_class = [int(v) for v in node.attrs.get("vectors_per_class") or []]
        vectors = sum(per_class)
        coef, rho = floats(node, "coefficients"), floats(node, "rho")
        prob_a, prob_b = floats(node, "prob_a"), floats(node, "prob_b")
        pairs = classes * (classes - 1) // 2
        if classes < 2:
            raise UnsupportedError(f"{classes} class labels: at least two are needed", node.where())
        if vectors and (len(per_class) != classes or coef.size < (classes - 1) * vectors or rho.size < pairs):
            raise UnsupportedError(f"vectors_per_class, coefficients and rho do not fit {classes} classes of "
                                   f"{vectors} support vectors", node.where())
        if not vectors and (coef.size != classes * features or rho.size < 1):
            raise UnsupportedError(f"{coef.size} coefficients for {classes} classes of {features} features",
                                   node.where())
        if prob_a.size != prob_b.size or (prob_a.size and vectors and prob_a.size < pairs):
            raise UnsupportedError("prob_a and prob_b must both have one value per pair of classes", node.where())
        return rows, features, labels, per_class, vectors, coef, rho, prob_a, prob_b

    def infer(self, node: Node):
        rows, _, labels, _, vectors, _, _, prob_a, _ = self._check(node)
        classes = len(labels)
        scores = classes if not vectors or prob_a.size else classes * (classes - 1) // 2 if classes > 2 else 2
        post_transform(node)
        return [(np.int64, (rows,)), (np.float32, (rows, scores))]

    def lower(self, node: Node, ctx) -> None:
        rows, features, labels, per_class, vectors, coef, rho, prob_a, prob_b = self._check(node)
        classes, pairs = len(labels), len(labels) * (len(labels) - 1) // 2
        label, z = node.outputs[0], node.outputs[1] if len(node.outputs) > 1 else None
        stride = self.infer(node)[1][1][1]
        out = ctx.ptr(z) if z is not None and z.name else ctx.scratch(rows * stride * 4, "scores")
        post = post_transform(node)

        def table(name, values):
            values = np.asarray(values, np.float32)
            return ctx.constant(Value(f"{node.name}_{name}", np.dtype(np.float32), values.shape, values))

        args = dict(x=ctx.ptr(node.inputs[0]), x_type=ctx.c_type(node.inputs[0]), rows=rows, classes=classes, z=out,
                    stride=stride, label=ctx.ptr(label) if label.name else None, post=post, lit=literals(np.float32),
                    labels=ctx.static_array("labels", "int64_t", labels, "classlabels_ints"), proba=bool(prob_a.size),
                    coef=table("coefficients", coef), rho0=fill_literal(rho[0], np.float32),
                    all_positive=bool(np.all(coef >= 0)), pairs=pairs)
        if not vectors:
            ctx.emit("ops/svm.c.j2", kind="linear", **args, **kernel_values(node, 0, features, ctx))
            return
        first = np.concatenate([[0], np.cumsum(per_class)[:-1]]).astype(int).tolist()
        args.update(first=ctx.static_array("first", "uint32_t", first, "each class's first support vector"),
                    count=ctx.static_array("count", "uint32_t", per_class, "vectors_per_class"),
                    rho=table("rho", rho), votes=ctx.scratch(classes * 4, "votes", dtype=np.int32),
                    two={None: "negate", "logistic": "logistic", "probit": "probit"}.get(post, "complement"))
        if prob_a.size:
            args.update(prob_a=table("prob_a", prob_a), prob_b=table("prob_b", prob_b),
                        pair_scores=ctx.scratch(pairs * 4, "pair_scores"),
                        p=ctx.scratch(classes * classes * 4, "pairwise"), q=ctx.scratch(classes * classes * 4, "q"),
                        qp=ctx.scratch(classes * 4, "qp"), epsilon=fill_literal(0.005 / classes, np.float32))
        ctx.emit("ops/svm.c.j2", kind="svc", **args, **kernel_values(node, vectors, features, ctx))
