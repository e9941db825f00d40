"""Unique: its output holds the distinct values (and where they occur), so its length depends on the input values.
mlcc compiles it only when every input is a constant: the frontend then folds it through onnx's reference;
otherwise the build stops with the standard value-dependent-shape error."""

from __future__ import annotations

from . import Op, register


@register
class Unique(Op):
    op_type = "Unique"
    attrs = {"axis": None, "sorted": 1}
    value_dependent_shape = True
