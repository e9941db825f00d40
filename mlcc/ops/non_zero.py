"""NonZero: its output holds the indices of the non-zero elements, so its length depends on the input values. mlcc
compiles it only when every input is a constant: the frontend then folds it through onnx's reference; otherwise
the build stops with the standard value-dependent-shape error."""

from __future__ import annotations

from . import Op, register


@register
class NonZero(Op):
    op_type = "NonZero"
    value_dependent_shape = True
