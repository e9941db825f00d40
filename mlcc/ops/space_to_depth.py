"""SpaceToDepth: the inverse of DepthToSpace (DCR): a transpose of the (N, C, H/b, b, W/b, b) view."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register
from ._copy import emit_regions, transpose_region


@register
class SpaceToDepth(Op):
    op_type = "SpaceToDepth"
    attrs = {"blocksize": REQUIRED}

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        if len(x.shape) != 4:
            raise UnsupportedError(f"rank {len(x.shape)} input (only NCHW is defined)", node.where())
        n, c, h, w = x.shape
        b = int(node.attrs["blocksize"])
        region = transpose_region((n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4))
        emit_regions(ctx, node.outputs[0], x, [(region, "")])
