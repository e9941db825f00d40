"""MaxUnpool: a zero output but for each input element, written where its index (as MaxPool's Indices give it:
flat over the unpooled shape (N, C, (in - 1) * stride - pads + kernel, ...)) points. A larger `output_shape`
holds that unpooled tensor in its leading corner, as onnx's reference does. Indices come at run time and are
clamped to the unpooled tensor."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import Node
from . import REQUIRED, Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions, fill_literal
from ._indexing import Nest, add, emit_indexed


def _term(coordinate: str, stride: int) -> str:
    return f"(size_t)({coordinate})" + (f" * {stride}" if stride != 1 else "")


@register
class MaxUnpool(Op):
    op_type = "MaxUnpool"
    attrs = {"kernel_shape": REQUIRED, "pads": None, "strides": None}
    float16_native = True  # moves bits only

    def infer(self, node: Node):
        shape = const_ints(node, 2, "output_shape")
        return [(node.inputs[0].dtype, shape if shape is not None else self.unpooled_shape(node))]

    def unpooled_shape(self, node: Node) -> list[int]:
        x = node.inputs[0]
        kernel = list(node.attrs["kernel_shape"])
        spatial = len(kernel)
        pads = list(node.attrs.get("pads") or [0] * 2 * spatial)
        steps = list(node.attrs.get("strides") or [1] * spatial)
        return [int(x.shape[0]), int(x.shape[1])] + [
            (int(x.shape[2 + d]) - 1) * steps[d] - pads[d] - pads[spatial + d] + kernel[d] for d in range(spatial)]

    def lower(self, node: Node, ctx) -> None:
        x, indices, out = node.inputs[0], node.inputs[1], node.outputs[0]
        unpooled = self.unpooled_shape(node)
        if len(unpooled) != len(out.shape) or list(unpooled[:2]) != list(out.shape[:2]) or \
                any(u > o for u, o in zip(unpooled, out.shape)):
            raise ShapeError(f"output_shape {list(out.shape)} does not hold the unpooled shape {unpooled}",
                             node.where())
        emit_regions(ctx, out, None, [(Region([out.size], [1]), "")], fill=fill_literal(0, out.dtype),
                     fill_is_zero=True)
        # the flat index k over `unpooled`, unravelled onto out's strides: leading axes where both shapes agree
        # share one quotient, trailing ones one remainder (all of k when the shapes are the same)
        out_strides, flat_strides = contiguous_strides(out.shape), contiguous_strides(unpooled)
        rank = len(unpooled)
        lead = next((d for d in range(rank) if unpooled[d] != out.shape[d]), rank)
        terms = ["(size_t)k"] if lead == rank else [_term(f"k / {flat_strides[lead - 1]}", out_strides[lead - 1])]
        for d in range(lead, rank):
            if list(unpooled[d:]) == list(out.shape[d:]):
                terms.append(_term(f"k % {flat_strides[d - 1]}", 1))
                break
            quotient = f"k / {flat_strides[d]}" if flat_strides[d] != 1 else "k"
            terms.append(_term(f"{quotient} % {unpooled[d]}", out_strides[d]))
        nest = Nest.over([x.size])
        emit_indexed(ctx, nest, [("k", f"{ctx.ptr(indices)}[{nest.index([1])}]", int(np.prod(unpooled)))],
                     f"{ctx.ptr(out)}[{add(*terms)}] = {ctx.ptr(x)}[{nest.index([1])}];")
