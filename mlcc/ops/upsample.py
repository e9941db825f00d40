"""Upsample (opsets 7 and 9, deprecated since 10): Resize with asymmetric coordinates, scales given as an
attribute (7) or a constant input (9). Lowered through the build-time tap tables of _resample.
"""

from __future__ import annotations

from ..errors import NeedsConstantError, ShapeError
from ..ir import Node
from . import Op, register
from ._resample import Interpolation, lower_resample, output_shape


@register
class Upsample(Op):
    op_type = "Upsample"
    attrs = {"mode": "nearest", "scales": None}

    def scales(self, node: Node) -> list[float]:
        if node.opset < 9:
            given = node.attrs.get("scales")
            if given is None:
                raise ShapeError("attribute 'scales' is required", node.where())
        else:
            v = node.input(1)
            if v is None:
                raise ShapeError("input 'scales' is required", node.where())
            if not v.is_const:
                raise NeedsConstantError(f"its scales input {v.name!r} is computed at run time; the output shape "
                                         "depends on it, so mlcc needs it known at build time", node.where(), v.name)
            given = v.data.reshape(-1)
        scales = [float(s) for s in given]
        if len(scales) != len(node.inputs[0].shape) or any(not s >= 1 for s in scales):
            raise ShapeError(f"scales {scales} must be >= 1, one per input dim", node.where())
        return scales

    def infer(self, node: Node):
        x = node.inputs[0]
        return [(x.dtype, output_shape(x.shape, self.scales(node)))]

    def lower(self, node: Node, ctx) -> None:
        mode = "linear" if node.attrs["mode"] == "bilinear" else node.attrs["mode"]
        lower_resample(node, ctx, Interpolation(mode, "asymmetric", "simple"), self.scales(node))
