"""SpaceToDepth: a transpose of the (N, C, H/b, b, W/b, b) view. DCR mode (the default; the inverse of
DepthToSpace's DCR) stacks the blocks as (blocky, blockx, c), CRD (opset 28) as (c, blocky, blockx)."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register
from ._copy import emit_regions, transpose_region

# mode -> the permutation of the (N, C, H/b, b, W/b, b) view giving the output's (N, C*b*b, H/b, W/b) order
PERMUTATIONS = {"DCR": (0, 3, 5, 1, 2, 4), "CRD": (0, 1, 3, 5, 2, 4)}


@register
class SpaceToDepth(Op):
    op_type = "SpaceToDepth"
    attrs = {"blocksize": REQUIRED, "mode": "DCR"}

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        mode = node.attrs["mode"]
        if mode not in PERMUTATIONS or len(x.shape) != 4:
            raise UnsupportedError(f"mode {mode!r} on rank {len(x.shape)} (DCR or CRD on NCHW)", node.where())
        n, c, h, w = x.shape
        b = int(node.attrs["blocksize"])
        region = transpose_region((n, c, h // b, b, w // b, b), PERMUTATIONS[mode])
        emit_regions(ctx, node.outputs[0], x, [(region, f"{mode} mode")])
