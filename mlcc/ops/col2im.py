"""Col2Im: the inverse of im2col. Input (N, C * prod(block_shape), L) holds, per channel and block position,
one value per sliding position; each is added into the image pixel it covers. image_shape and block_shape
decide the geometry, so they must be known at build time; the offsets of every column element in its image
are then a table, and the C only accumulates (in the order onnx's reference does)."""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions, fill_literal


def _image_offsets(image: list[int], block: list[int], dilations, pads, steps, where: str) -> list[int]:
    """Image offset of each (block position, sliding position) column element; -1 in the padding."""
    spatial = len(image)
    slides = [(image[d] + pads[d] + pads[spatial + d] - dilations[d] * (block[d] - 1) - 1) // steps[d] + 1
              for d in range(spatial)]
    if any(s <= 0 for s in slides):
        raise ShapeError(f"the block {block} does not fit the padded image {image}", where)
    strides = contiguous_strides(image)
    offsets = []
    for kernel in itertools.product(*(range(b) for b in block)):
        for slide in itertools.product(*(range(s) for s in slides)):
            at = [slide[d] * steps[d] - pads[d] + kernel[d] * dilations[d] for d in range(spatial)]
            inside = all(0 <= a < image[d] for d, a in enumerate(at))
            offsets.append(sum(a * s for a, s in zip(at, strides)) if inside else -1)
    return offsets


@register
class Col2Im(Op):
    op_type = "Col2Im"
    attrs = {"dilations": None, "pads": None, "strides": None}

    def infer(self, node: Node):
        x = node.inputs[0]
        image, block = const_ints(node, 1, "image_shape"), const_ints(node, 2, "block_shape")
        size = int(np.prod(block, dtype=np.int64))
        if len(x.shape) != 3 or size <= 0 or x.shape[1] % size:
            raise ShapeError(f"input {list(x.shape)} is not (N, C * {size}, L) for block {block}", node.where())
        return [(x.dtype, (x.shape[0], x.shape[1] // size, *image))]

    def lower(self, node: Node, ctx) -> None:
        x, out = node.inputs[0], node.outputs[0]
        if out.dtype == np.float16:  # stored as raw bits: C arithmetic is wrong
            raise UnsupportedError("Col2Im on float16", node.where())
        image, block = const_ints(node, 1, "image_shape"), const_ints(node, 2, "block_shape")
        spatial = len(image)
        dilations = list(node.attrs.get("dilations") or [1] * spatial)
        pads = list(node.attrs.get("pads") or [0] * 2 * spatial)
        steps = list(node.attrs.get("strides") or [1] * spatial)
        offsets = _image_offsets(image, block, dilations, pads, steps, node.where())
        block_size, pixels = int(np.prod(block)), int(np.prod(image))
        columns = block_size * int(x.shape[2])
        if len(offsets) != columns:
            raise ShapeError(f"L = {x.shape[2]} is not the number of sliding positions, {len(offsets) // block_size}",
                             node.where())
        emit_regions(ctx, out, None, [(Region([out.size], [1]), "")], fill=fill_literal(0, out.dtype),
                     fill_is_zero=True)
        table = ctx.static_array("offsets", "int32_t" if pixels < 2**31 else "int64_t", offsets,
                                 f"{node.name} image offset per column element")
        ctx.emit("ops/col2im.c.j2", images=out.size // pixels, columns=columns, pixels=pixels, table=table,
                 out=ctx.ptr(out), x=ctx.ptr(x))
