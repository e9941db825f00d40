"""ai.onnx.ml OneHotEncoder on numbers: Y = X's shape + [categories] floats, each value (truncated to int64, as
onnxruntime) one-hot over cats_int64s. An unknown value gives a row of zeros; with zeros=0 onnxruntime fails
the run instead, which a static program cannot: mlcc documents the zero row. String categories are refused."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._ml import STRING_LABELS_HINT, numeric_input


def categories(node: Node) -> list[int]:
    if node.attrs.get("cats_strings"):
        raise UnsupportedError(f"cats_strings: {STRING_LABELS_HINT}", node.where())
    cats = [int(v) for v in node.attrs.get("cats_int64s") or []]
    if not cats:
        raise UnsupportedError("cats_int64s must list the categories", node.where())
    return cats


@register
class OneHotEncoder(Op):
    op_type = "OneHotEncoder"
    domain = "ai.onnx.ml"
    attrs = {"cats_int64s": None, "cats_strings": None, "zeros": 1}

    def infer(self, node: Node):
        x = numeric_input(node, 0, "fi")
        return [(np.float32, (*x.shape, len(categories(node))))]

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        cats = np.asarray(categories(node), np.int64)
        keys, first = np.unique(cats, return_index=True)  # a repeated category keeps its first column
        ctx.emit("ops/one_hot_encoder.c.j2", x=ctx.ptr(x), y=ctx.ptr(node.outputs[0]), count=x.size,
                 categories=len(cats), keys_count=len(keys), keys=ctx.constant(Value(f"{node.name}_categories", keys.dtype, keys.shape, keys)),
                 columns=ctx.static_array("columns", "uint32_t", first.tolist(), "each sorted category's column"))
