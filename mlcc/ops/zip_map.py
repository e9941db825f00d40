"""ai.onnx.ml ZipMap makes a sequence of maps (class label -> probability), which has no place in a static
tensor program: it is refused with one line that says how to export the model without it."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register

HINT = ("ZipMap outputs a sequence of maps, which mlcc does not compile; export the probabilities as a tensor "
        "instead: skl2onnx `to_onnx(model, X, options={id(model): {'zipmap': False}})` (onnxmltools: "
        "`zipmap=False`)")


@register
class ZipMap(Op):
    op_type = "ZipMap"
    domain = "ai.onnx.ml"
    attrs = {"classlabels_int64s": None, "classlabels_strings": None}

    def infer(self, node: Node):
        raise UnsupportedError(HINT, node.where())
