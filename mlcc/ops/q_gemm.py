"""com.microsoft QGemm(A, a_scale, a_zero, B, b_scale, b_zero, C, y_scale, y_zero): Gemm on dequantized A
and B (B's scale per tensor or per output column), C an int32 bias in units of alpha * a_scale * b_scale
(onnxruntime adds C to the integer product before scaling both by alpha); without y_scale the output is
float, else quantized (see _qoperator)."""

from __future__ import annotations

import onnx
from onnx import helper

from . import register
from ._qoperator import QOperator, QuantizedBody, attribute


@register
class QGemm(QOperator):
    op_type = "QGemm"

    def function_body(self, proto, opset, prefix):
        body = QuantizedBody(proto, prefix)
        trans_a, trans_b = int(attribute(proto, "transA", 0)), int(attribute(proto, "transB", 0))
        a = body.dequantize(0, 1, 2)
        b = body.dequantize(3, 4, 5, axis=0 if trans_b else 1)  # a per-column scale runs along N
        inputs = [a, b]
        alpha = float(attribute(proto, "alpha", 1.0))
        if body.input(6):
            bias_scale = body.node("Mul", [body.input(1), body.input(4)])
            if alpha != 1.0:
                alpha_value = helper.make_tensor("alpha", onnx.TensorProto.FLOAT, [], [alpha])
                bias_scale = body.node("Mul", [bias_scale, body.node("Constant", [], value=alpha_value)])
            # C broadcasts to (M, N); a per-column scale runs along N, C's last axis
            inputs.append(body.node("DequantizeLinear", [body.input(6), bias_scale], axis=-1))
        gemm = dict(alpha=alpha, transA=trans_a, transB=trans_b)
        if body.input(7):
            body.quantize(body.node("Gemm", inputs, **gemm), 7, 8)
        else:
            body.node("Gemm", inputs, proto.output[0], **gemm)
        return body.done()
