"""com.microsoft DynamicQuantizeMatMul(A, B, b_scale, b_zero, bias): float A quantized to uint8 by its own
range (DynamicQuantizeLinear), multiplied by the 8-bit B in int32 (MatMulInteger), scaled back by
a_scale * b_scale (b_scale per tensor or per column) and the float bias added - onnxruntime's
definition, imported as those ops (see _qoperator)."""

from __future__ import annotations

from onnx import helper

from . import register
from ._qoperator import QOperator, QuantizedBody


@register
class DynamicQuantizeMatMul(QOperator):
    op_type = "DynamicQuantizeMatMul"

    def function_body(self, proto, opset, prefix):
        body = QuantizedBody(proto, prefix)
        a, a_scale, a_zero = (f"{prefix}{n}" for n in ("a_q", "a_scale", "a_zero"))
        body.nodes.append(helper.make_node("DynamicQuantizeLinear", [body.input(0)], [a, a_scale, a_zero], name=a))
        product = body.node("MatMulInteger", [a, body.input(1), a_zero, body.input(3)])
        scaled = body.node("Mul", [body.node("Cast", [product], to=1), body.node("Mul", [a_scale, body.input(2)])])
        if body.input(4):
            body.node("Add", [scaled, body.input(4)], proto.output[0])
        else:
            body.nodes[-1].output[0] = proto.output[0]
        return body.done()
