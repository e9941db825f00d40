"""Resize (opsets 10-19): nearest, linear and cubic modes (antialias, exclude_outside, every coordinate
transformation incl. tf_crop_and_resize, keep_aspect_ratio_policy, axes) with constant scales or sizes,
through the build-time tap tables of _resample. Opset 10 resizes as Upsample does (asymmetric coordinates).
Scales, sizes and roi must be known at build time (NeedsConstantError otherwise).
"""

from __future__ import annotations

import numpy as np

from ..cexpr import VariableExtentError
from ..errors import NeedsConstantError, ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._resample import Interpolation, lower_resample, lower_resample_run_time, output_shape, run_time_extents


@register
class Resize(Op):
    op_type = "Resize"
    variable_extents = True  # nearest and linear: each run computes its taps (_resample.lower_resample_run_time)
    attrs = {"mode": "nearest", "coordinate_transformation_mode": "half_pixel", "nearest_mode": "round_prefer_floor",
             "cubic_coeff_a": -0.75, "exclude_outside": 0, "extrapolation_value": 0.0, "antialias": 0, "axes": None,
             "keep_aspect_ratio_policy": "stretch"}

    def geometry(self, node: Node) -> tuple[tuple[int, ...], list[float]]:
        """The output shape and the scale of every axis, from the constant scales or sizes."""
        x = node.inputs[0]
        rank = len(x.shape)
        policy = node.attrs["keep_aspect_ratio_policy"]
        if policy not in ("stretch", "not_larger", "not_smaller"):
            raise UnsupportedError(f"keep_aspect_ratio_policy {policy!r} is not supported", node.where())
        axes = self.axes(node)
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
        if policy != "stretch":  # one scale for every axis given, so the aspect ratio is kept
            ratios = [s / x.shape[a] for a, s in zip(axes, given)]
            scale = min(ratios) if policy == "not_larger" else max(ratios)
            for a in axes:
                shape[a] = int(scale * x.shape[a] + 0.5)
            return tuple(shape), [scale if a in axes else 1.0 for a in range(rank)]
        for a, s in zip(axes, given):
            shape[a] = s
        return tuple(shape), [float(np.float32(o) / np.float32(i)) if i else 1.0 for o, i in zip(shape, x.shape)]

    def axes(self, node: Node) -> list[int]:
        rank = len(node.inputs[0].shape)
        axes = [a % rank if -rank <= a < rank else None for a in node.attrs.get("axes") or range(rank)]
        if None in axes or len(set(axes)) != len(axes):
            raise ShapeError(f"axes {node.attrs['axes']} are invalid for rank {rank}", node.where())
        return axes

    def roi(self, node: Node) -> list[tuple[float, float]] | None:
        """Per-axis (start, end) of the crop, for tf_crop_and_resize (the roi input lists starts, then ends)."""
        if node.opset < 11 or node.attrs["coordinate_transformation_mode"] != "tf_crop_and_resize":
            return None
        v = node.input(1)
        if v is None or not v.size:
            raise ShapeError("tf_crop_and_resize needs the roi input", node.where())
        if not v.is_const:
            raise NeedsConstantError(f"its roi input {v.name!r} is computed at run time; mlcc needs it known at "
                                     "build time", node.where(), v.name)
        axes, rank = self.axes(node), len(node.inputs[0].shape)
        given = [float(r) for r in np.asarray(v.data, np.float64).reshape(-1)]
        if len(given) != 2 * len(axes):
            raise ShapeError(f"roi has {len(given)} values for {len(axes)} axes", node.where())
        roi = [(0.0, 1.0)] * rank
        for i, a in enumerate(axes):
            roi[a] = (given[i], given[len(axes) + i])
        return roi

    def infer(self, node: Node):
        self.roi(node)  # at typing time, so a run-time roi is reported as the operand to freeze
        return [(node.inputs[0].dtype, self.geometry(node)[0])]

    def flops(self, node: Node) -> int:
        taps = {"linear": 2, "cubic": 4}.get(node.attrs["mode"], 0)
        moved = sum(i != o for i, o in zip(node.inputs[0].shape, node.outputs[0].shape))
        return 2 * taps ** moved * node.outputs[0].size if taps else 0  # a multiply-add per tap

    def lower(self, node: Node, ctx) -> None:
        a = node.attrs
        if run_time_extents(node):  # taps computed on each run: scales as given, else out / in
            if a["keep_aspect_ratio_policy"] != "stretch" or self.roi(node) is not None:
                raise VariableExtentError(f"keep_aspect_ratio_policy {a['keep_aspect_ratio_policy']!r} and "
                                          "tf_crop_and_resize are decided at build time only")
            scales_at = 1 if node.opset < 11 else 2
            given = node.input(scales_at)
            scales = None
            if given is not None and given.size:
                scales = [1.0] * len(node.inputs[0].shape)
                for axis, scale in zip(self.axes(node), given.data.reshape(-1)):
                    scales[axis] = float(scale)
            how = (Interpolation(a["mode"], "asymmetric", "simple") if node.opset < 11 else
                   Interpolation(a["mode"], a["coordinate_transformation_mode"], a["nearest_mode"],
                                 antialias=bool(a["antialias"])))
            lower_resample_run_time(node, ctx, how, scales)
            return
        _, scales = self.geometry(node)
        if node.opset < 11:
            how = Interpolation(a["mode"], "asymmetric", "simple")
        else:
            how = Interpolation(a["mode"], a["coordinate_transformation_mode"], a["nearest_mode"],
                                float(a["cubic_coeff_a"]), bool(a["exclude_outside"]), bool(a["antialias"]),
                                float(a["extrapolation_value"]), self.roi(node))
        lower_resample(node, ctx, how, scales)
