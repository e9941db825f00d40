"""ImageDecoder: the decoded image's height and width are read from the encoded bytes, so its output shape
depends on the input values. mlcc compiles it only when the encoded image is a constant (folded through
onnx's reference); otherwise the build stops with the standard value-dependent-shape error."""

from __future__ import annotations

from . import Op, register


@register
class ImageDecoder(Op):
    op_type = "ImageDecoder"
    attrs = {"pixel_format": "RGB"}
    value_dependent_shape = True
