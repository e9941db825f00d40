"""AffineGrid (opset 20): the sampling grid of GridSample for a batch of affine matrices theta (N, 2, 3) or
(N, 3, 4), over the constant output size (N, C, H, W) or (N, C, D, H, W). grid[n, ..., j] = theta[n, j] .
(x, y[, z], 1), the base coordinates spread over [-1, 1] (pixel centres, or corners with align_corners).
The base coordinates are build-time tables per spatial dim; the C does the matrix-vector products.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import const_ints


def base_coordinates(extent: int, align_corners: bool) -> np.ndarray:
    """Pixel i's normalized coordinate along a dim of `extent`. A single pixel sits at 0 either way (as in
    onnxruntime and PyTorch; onnx's reference puts it at -1 with align_corners)."""
    i = np.arange(extent, dtype=np.float64)
    if align_corners:
        return -1 + i * (2.0 / (extent - 1)) if extent > 1 else np.zeros(extent)
    return -1 + (2 * i + 1) / extent


@register
class AffineGrid(Op):
    op_type = "AffineGrid"
    attrs = {"align_corners": 0}

    def size(self, node: Node) -> list[int]:
        theta = node.inputs[0]
        size = const_ints(node, 1, "size")
        if size is None or len(size) not in (4, 5) or min(size) < 0:
            raise ShapeError(f"size {size} must be (N, C, H, W) or (N, C, D, H, W)", node.where())
        spatial = len(size) - 2
        if tuple(theta.shape) != (size[0], spatial, spatial + 1):
            raise ShapeError(f"theta {theta.shape} does not fit size {size}", node.where())
        return size

    def infer(self, node: Node):
        size = self.size(node)
        return [(node.inputs[0].dtype, (size[0], *size[2:], len(size) - 2))]

    def flops(self, node: Node) -> int:
        return 2 * node.outputs[0].size * len(node.outputs[0].shape[1:-1])

    def lower(self, node: Node, ctx) -> None:
        theta, grid = node.inputs[0], node.outputs[0]
        if theta.dtype.kind != "f":
            raise UnsupportedError(f"AffineGrid of {theta.dtype.name}", node.where())
        if grid.size == 0:
            return
        size = self.size(node)
        spatial = size[2:]  # outermost first: (D,) H, W
        rank = len(spatial)
        align = bool(node.attrs["align_corners"])
        # loop i<k> runs over spatial dim k; theta's column c multiplies the base coordinate of dim rank-1-c
        tables = [ctx.static_array(f"base{k}", "float", base_coordinates(n, align),
                                   f"spatial dim {k}: normalized pixel coordinates") for k, n in enumerate(spatial)]
        rows = []
        for j in range(rank):
            terms = [f"th[{j * (rank + 1) + c}] * {tables[rank - 1 - c]}[i{rank - 1 - c}]" for c in range(rank)]
            rows.append(" + ".join([*terms, f"th[{j * (rank + 1) + rank}]"]))
        ctx.emit("ops/affine_grid.c.j2", theta=ctx.ptr(theta), grid=ctx.ptr(grid), ctype=ctx.c_type(theta),
                 batch=size[0], matrix=rank * (rank + 1), extents=spatial, rows=rows)
