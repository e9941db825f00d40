"""Resize (opsets 10-19): nearest and linear modes with constant scales or sizes, through the build-time tap
tables of _resample. Opset 10 resizes as Upsample does (asymmetric coordinates). Anything whose output
shape or taps would depend on run-time values, and the modes not implemented, raise UnsupportedError.
"""

from __future__ import annotations

import numpy as np

from ..errors import NeedsConstantError, ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._resample import lower_resample, output_shape


@register
class Resize(Op):
    op_type = "Resize"
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "nearest_mode": "round_prefer_floor",
             "cubic_coeff_a": -0.75, "exclude_outside": 0, "extrapolation_value": 0.0, "antialias": 0, "axes": None,
             "keep_aspect_ratio_policy": "stretch"}

    def geometry(self, node: Node) -> tuple[tuple[int, ...], list[float]]:
        """The output shape and the scale of every axis, from the constant scales or sizes."""
        x = node.inputs[0]
        rank = len(x.shape)
        if node.attrs["antialias"]:
            raise UnsupportedError("antialias=1 is not supported", node.where())
        if node.attrs["keep_aspect_ratio_policy"] != "stretch":
            raise UnsupportedError(f"keep_aspect_ratio_policy {node.attrs['keep_aspect_ratio_policy']!r} is not "
                                   "supported (only stretch)", node.where())
        axes = [a % rank if -rank <= a < rank else None for a in node.attrs.get("axes") or range(rank)]
        if None in axes or len(set(axes)) != len(axes):
            raise ShapeError(f"axes {node.attrs['axes']} are invalid for rank {rank}", node.where())
        scales_at, sizes_at = (1, None) if node.opset < 11 else (2, 3)
        scales, sizes = node.input(scales_at), node.input(sizes_at) if sizes_at else None
        for what, v in (("scales", scales), ("sizes", sizes)):
            if v is not None and not v.is_const:
                raise NeedsConstantError(f"its {what} input {v.name!r} is computed at run time; the output shape "
                                         "depends on it, so mlcc needs it known at build time", node.where(), v.name)
        if scales is not None and scales.size:
            given = [float(s) for s in scales.data.reshape(-1)]
            if len(given) != len(axes) or any(not s > 0 for s in given):
                raise ShapeError(f"scales {given} do not fit rank {rank} and axes {axes}", node.where())
            full = [1.0] * rank
            for a, s in zip(axes, given):
                full[a] = s
            return output_shape(x.shape, full), full
        if sizes is None or not sizes.size:
            raise ShapeError("neither scales nor sizes is given", node.where())
        given = [int(s) for s in sizes.data.reshape(-1)]
        if len(given) != len(axes) or any(s < 0 for s in given):
            raise ShapeError(f"sizes {given} do not fit rank {rank} and axes {axes}", node.where())
        shape = list(x.shape)
        for a, s in zip(axes, given):
            shape[a] = s
        return tuple(shape), [float(np.float32(o) / np.float32(i)) if i else 1.0 for o, i in zip(shape, x.shape)]

    def infer(self, node: Node):
        return [(node.inputs[0].dtype, self.geometry(node)[0])]

    def flops(self, node: Node) -> int:
        if node.attrs["mode"] != "linear":
            return 0
        moved = sum(i != o for i, o in zip(node.inputs[0].shape, node.outputs[0].shape))
        return 2 * 2 ** moved * node.outputs[0].size  # a multiply-add per tap, two taps per resized axis

    def lower(self, node: Node, ctx) -> None:
        _, scales = self.geometry(node)
        if node.opset < 11:
            coordinate_mode, nearest_mode = "asymmetric", "simple"
        else:
            coordinate_mode, nearest_mode = node.attrs["coordinate_transformation_mode"], node.attrs["nearest_mode"]
        lower_resample(node, ctx, node.attrs["mode"], scales, coordinate_mode, nearest_mode)
