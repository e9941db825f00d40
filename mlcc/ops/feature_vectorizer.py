"""ai.onnx.ml FeatureVectorizer: its inputs' rows side by side as float, each input given inputdimensions[i]
columns (its first ones, zero-padded when it has fewer)."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._ml import numeric_input


def layout(node: Node) -> tuple[int, list[int]]:
    widths = [int(d) for d in node.attrs.get("inputdimensions") or []]
    if len(widths) != len(node.inputs) or any(w < 0 for w in widths):
        raise UnsupportedError(f"inputdimensions must give each of the {len(node.inputs)} inputs a width", node.where())
    rows = set()
    for i in range(len(node.inputs)):
        x = numeric_input(node, i, "fi")
        if len(x.shape) not in (1, 2):
            raise UnsupportedError(f"input {x.name!r} must be [N, C] or [C]", node.where())
        rows.add(1 if len(x.shape) == 1 else x.shape[0])
    if len(rows) > 1:
        raise UnsupportedError(f"the inputs have different row counts {sorted(rows)}", node.where())
    return rows.pop(), widths


@register
class FeatureVectorizer(Op):
    op_type = "FeatureVectorizer"
    domain = "ai.onnx.ml"
    attrs = {"inputdimensions": None}

    def infer(self, node: Node):
        rows, widths = layout(node)
        return [(np.float32, (rows, sum(widths)))]

    def lower(self, node: Node, ctx) -> None:
        rows, widths = layout(node)
        parts, offset = [], 0
        for x, width in zip(node.inputs, widths):
            columns = x.shape[-1]
            parts.append((ctx.ptr(x), ctx.c_type(x), columns, min(columns, width), width, offset))
            offset += width
        ctx.emit("ops/feature_vectorizer.c.j2", y=ctx.ptr(node.outputs[0]), rows=rows, width=offset, parts=parts)
