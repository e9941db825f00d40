"""com.microsoft's QOperator ops as the float op between DequantizeLinear and QuantizeLinear.

onnxruntime's quantizer writes `QLinearAdd(a, a_scale, a_zero, b, b_scale, b_zero, y_scale, y_zero)` for
what its QDQ format writes as DQ(a), DQ(b) -> Add -> Q(y); the two mean the same numbers (onnxruntime's own
kernels compute them in float, or from a table of the float op over every 8-bit input). So mlcc imports the
QOperator form as that island, and passes/lower_quantized_islands gives both forms the same integer code.
"""

from __future__ import annotations

import onnx
from onnx import helper

from . import Op

BODY_OPSET = 19  # DequantizeLinear/QuantizeLinear per axis, Softmax over one axis


class QuantizedBody:
    """Collects a body's nodes, naming intermediates under the caller's node prefix."""

    def __init__(self, proto: onnx.NodeProto, prefix: str):
        self.proto, self.prefix, self.nodes = proto, prefix, []

    def input(self, i: int) -> str:
        return self.proto.input[i] if i < len(self.proto.input) else ""

    def node(self, op_type: str, inputs: list[str], output: str | None = None, **attrs) -> str:
        output = output or f"{self.prefix}{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output, **attrs))
        return output

    def dequantize(self, x: int, scale: int, zero: int, **attrs) -> str:
        return self.node("DequantizeLinear", [self.input(x), self.input(scale), self.input(zero)], **attrs)

    def quantize(self, y: str, scale: int, zero: int) -> str:
        return self.node("QuantizeLinear", [y, self.input(scale), self.input(zero)], self.proto.output[0])

    def done(self) -> tuple[list[onnx.NodeProto], dict[str, int]]:
        return self.nodes, {"": BODY_OPSET}


def attribute(proto: onnx.NodeProto, name: str, default=None):
    for a in proto.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


class QOperator(Op):
    """An op imported as its function body (the frontend asks prefers_function, then function_body)."""
    domain = "com.microsoft"

    def prefers_function(self, proto: onnx.NodeProto, opset: int) -> bool:
        return True
