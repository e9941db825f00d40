"""GridSample (opset 16: 2-D, modes bilinear/nearest/bicubic; opset 20+: N-D, modes linear/nearest/cubic):
Y[n, c, p] samples X[n, c] at the normalized point Grid[n, p] (its components in reverse dim order: x is
the last spatial dim), with zeros, border or reflection padding and align_corners as in PyTorch.

The grid is run-time data, so the C (templates/ops/grid_sample.c.j2) does the coordinate arithmetic: per
grid point and spatial dim it computes the source coordinate, that dim's taps (1 nearest, 2 linear, 4
cubic) as input offsets and weights, then sums the tap products for every channel. Cubic sampling with
border padding clamps each tap, not the coordinate, as onnxruntime and PyTorch do (onnx's reference clamps
the coordinate first). Python supplies each
dim's constants: how to denormalize, the reflection range, extent and stride.
"""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import fill_literal

MODES = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic", "nearest": "nearest"}
TAPS = {"nearest": 1, "linear": 2, "cubic": 4}
PADDINGS = ("zeros", "border", "reflection")
CUBIC_A = -0.75


@register
class GridSample(Op):
    op_type = "GridSample"
    attrs = {"mode": "bilinear", "padding_mode": "zeros", "align_corners": 0}

    def infer(self, node: Node):
        x, grid = node.inputs[0], node.inputs[1]
        spatial = len(x.shape) - 2
        if spatial < 1 or len(grid.shape) != spatial + 2 or grid.shape[-1] != spatial or grid.shape[0] != x.shape[0]:
            raise ShapeError(f"grid {grid.shape} does not fit X {x.shape}", node.where())
        if node.opset < 20 and spatial != 2:
            raise ShapeError(f"GridSample-{node.opset} takes 4-D inputs", node.where())
        return [(x.dtype, (*x.shape[:2], *grid.shape[1:-1]))]

    def flops(self, node: Node) -> int:
        taps = TAPS.get(MODES.get(node.attrs["mode"], ""), 1) ** (len(node.inputs[0].shape) - 2)
        return 2 * taps * node.outputs[0].size

    def lower(self, node: Node, ctx) -> None:
        x, grid, y = node.inputs[0], node.inputs[1], node.outputs[0]
        mode, padding = MODES.get(node.attrs["mode"]), node.attrs["padding_mode"]
        if mode is None or padding not in PADDINGS:
            raise UnsupportedError(f"mode {node.attrs['mode']!r} with padding_mode {padding!r}", node.where())
        if x.dtype.kind != "f" or grid.dtype.kind != "f":
            raise UnsupportedError(f"GridSample of {x.dtype.name} on a {grid.dtype.name} grid", node.where())
        if y.size == 0:
            return
        align = bool(node.attrs["align_corners"])
        spatial = x.shape[2:]
        strides = [int(np.prod(spatial[i + 1:], dtype=np.int64)) for i in range(len(spatial))]
        gtype = grid.dtype

        def lit(v: float) -> str:
            return fill_literal(v, gtype)

        dims = []
        for i, (extent, stride) in enumerate(zip(spatial, strides)):
            lo, hi = (0.0, extent - 1.0) if align else (-0.5, extent - 0.5)
            dims.append(dict(
                component=len(spatial) - 1 - i, extent=extent,
                offset="(ptrdiff_t)p" if stride == 1 else f"(ptrdiff_t)p * {stride}",
                # align_corners: (g + 1) / 2 * (extent - 1); else ((g + 1) * extent - 1) / 2
                denormalize=(f"(at[{len(spatial) - 1 - i}] + {lit(1)}) / {lit(2)} * {lit(extent - 1)}" if align else
                             f"((at[{len(spatial) - 1 - i}] + {lit(1)}) * {lit(extent)} - {lit(1)}) / {lit(2)}"),
                lo=lit(lo), hi=lit(hi), span=lit(hi - lo), last=lit(extent - 1), foldable=hi > lo,
            ))
        suffix = "f" if gtype == np.float32 else ""
        a = CUBIC_A
        ctx.emit("ops/grid_sample.c.j2", x=ctx.ptr(x), grid=ctx.ptr(grid), y=ctx.ptr(y), ctype=ctx.c_type(x),
                 gtype=ctx.c_type(grid), batch=x.shape[0], channels=x.shape[1], in_plane=int(np.prod(spatial)),
                 x_block=int(np.prod(x.shape[1:])), y_block=int(np.prod(y.shape[1:])),
                 points=int(np.prod(grid.shape[1:-1])), rank=len(spatial), dims=dims, mode=mode, padding=padding,
                 taps=TAPS[mode], window_start=f"f - {lit(1)}" if mode == "cubic" else "f", floor=f"floor{suffix}", rint=f"rint{suffix}",
                 fmod=f"fmod{suffix}", zero=lit(0), one=lit(1), two=lit(2),
                 # Keys' cubic convolution weights at distances 1 + t, t, 1 - t, 2 - t
                 cubic=dict(a=lit(a), a2=lit(a + 2), a3=lit(a + 3), m5a=lit(-5 * a), a8=lit(8 * a), m4a=lit(-4 * a)))
