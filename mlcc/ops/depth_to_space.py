"""DepthToSpace: a transpose of a 6-d view of the NCHW input. DCR mode (the default) splits channels as
(blocky, blockx, c), CRD as (c, blocky, blockx)."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register
from ._copy import emit_regions, transpose_region

# mode -> (the 6-d view of (N, C, H, W) from (n, c, h, w, b), the permutation giving (N, C/b², H, b, W, b))
MODES = {
    "DCR": (lambda n, c, h, w, b: (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)),
    "CRD": (lambda n, c, h, w, b: (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3)),
}


@register
class DepthToSpace(Op):
    op_type = "DepthToSpace"
    attrs = {"blocksize": REQUIRED, "mode": "DCR"}

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        if node.attrs["mode"] not in MODES or len(x.shape) != 4:
            raise UnsupportedError(f"mode {node.attrs['mode']!r} on rank {len(x.shape)}", node.where())
        view, perm = MODES[node.attrs["mode"]]
        region = transpose_region(view(*x.shape, int(node.attrs["blocksize"])), perm)
        emit_regions(ctx, node.outputs[0], x, [(region, f"{node.attrs['mode']} mode")])
