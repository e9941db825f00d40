"""NonMaxSuppression: its output holds the indices of the boxes kept, so its length depends on the input values.
mlcc compiles it only when every input is a constant: the frontend then folds it through onnx's reference;
otherwise the build stops with the standard value-dependent-shape error."""

from __future__ import annotations

from . import Op, register


@register
class NonMaxSuppression(Op):
    op_type = "NonMaxSuppression"
    attrs = {"center_point_box": 0}
    value_dependent_shape = True
