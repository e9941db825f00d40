"""QuantizedMatMul (internal, domain "mlcc"): y = requantize(x_rows x W^T + bias) on 8-bit activations and int8
weights through runtime_c/kernels/qs8-gemm, or qs8-packed (the weights packed in panels at build time) where
the target has a qs8-packed form on its ISA; made by passes/lower_quantized_islands from a DequantizeLinear ->
MatMul/Gemm [-> ReLU/Clip] -> QuantizeLinear island, with zero points, bias and clamp folded (see _qs8).

Inputs: x ([..., k], uint8 or int8), w (int8 [n, ldw]: one zero-padded row per output column), bias,
multiplier, shift (int32 [n]). Attributes: k, a_flip (128 for uint8 x), y_zero, y_min, y_max.
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..ir import Node, Value
from . import Op, register
from ._qs8 import FAMILY, byte_pointer, gemm_for, packed_layout, packed_panels

DOMAIN = "mlcc"


def emit_requant(ctx, node: Node) -> str:
    bias, mult, shift = (ctx.ptr(v) for v in node.inputs[2:5])
    a = node.attrs
    return (f"const struct mlcc_qs8_requant rq = {{{bias}, {mult}, {shift}, "
            f"{int(a['y_zero'])}, {int(a['y_min'])}, {int(a['y_max'])}}};")


@register
class QuantizedMatMul(Op):
    op_type = "QuantizedMatMul"
    vector_families = ("qs8-gemm", "qs8-packed")
    domain = DOMAIN

    def lower(self, node: Node, ctx) -> None:
        x, w = node.inputs[0], node.inputs[1]
        y = node.outputs[0]
        k, n = int(node.attrs["k"]), w.shape[0]
        ctx.use_kernels(FAMILY)
        if kernels.kernel(ctx.target, "mlcc_qs8_packed_gemm").where == "isa":
            packed = packed_panels(w.data[:, :k], packed_layout(ctx.target))
            weights = ctx.constant(Value(f"{w.name}_packed", np.dtype(np.int8), packed.shape, packed))
            ctx.emit("ops/quantized_gemm_packed.c.j2", requant=emit_requant(ctx, node),
                     gemm=ctx.kernel("mlcc_qs8_packed_gemm"), m=x.size // k, n=n, k=k, x=byte_pointer(ctx, x),
                     a_flip=int(node.attrs["a_flip"]), w=weights, y=byte_pointer(ctx, y, writes=True))
            return
        ctx.emit("ops/quantized_gemm.c.j2", requant=emit_requant(ctx, node), gemm=ctx.uses_kernel(gemm_for(ctx.target)),
                 m=x.size // k, n=n, k=k, x=byte_pointer(ctx, x), a_flip=int(node.attrs["a_flip"]), w=ctx.ptr(w), ldw=w.shape[1],
                 y=byte_pointer(ctx, y, writes=True))

    def flops(self, node: Node) -> int:
        return 2 * node.outputs[0].size * int(node.attrs["k"])
