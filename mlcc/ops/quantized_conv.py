"""QuantizedConv (internal, domain "mlcc"): a 1-D or 2-D NCHW convolution of 8-bit activations by int8
weights, requantized, through runtime_c/kernels/qs8-gemm (patches of CONV_ROWS output pixels at a time in
scratch, then the GEMM); made by passes/lower_quantized_islands (see quantized_mat_mul for the operands).

Attributes: the geometry (kernel, stride, dilation, pad_begin: 2 ints each, group), x_zero (the padding's
value), a_flip, y_zero, y_min, y_max.
"""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._qs8 import CONV_ROWS, FAMILY, gemm_for, nchw_gemm_for
from .quantized_mat_mul import DOMAIN, emit_requant


@register
class QuantizedConv(Op):
    op_type = "QuantizedConv"
    vector_families = ("qs8-gemm",)
    domain = DOMAIN

    def lower(self, node: Node, ctx) -> None:
        x, w = node.inputs[0], node.inputs[1]
        y = node.outputs[0]
        a = node.attrs
        (in_h, in_w), (out_h, out_w) = _spatial(x.shape), _spatial(y.shape)
        pixels = out_h * out_w
        channel_major = nchw_gemm_for(ctx.target)
        ctx.use_kernels(FAMILY)
        if int(a["group"]) == x.shape[1] == w.shape[0]:  # depthwise
            rows, patches, driver, gemm = 0, None, "mlcc_qs8_dwconv_nchw", None
        elif channel_major:  # patches as k rows of `rows` pixels (none for an in-place 1x1)
            rows = CONV_ROWS
            k = x.shape[1] // int(a["group"]) * int(a["kernel"][0]) * int(a["kernel"][1])
            in_place = (list(a["kernel"]) == [1, 1] and list(a["stride"]) == [1, 1] and list(a["pad_begin"]) == [0, 0]
                        and (in_h, in_w) == (out_h, out_w))
            patches = "NULL" if in_place else ctx.scratch(rows * k, "patches", dtype="uint8")
            driver, gemm = "mlcc_qs8_conv_nchw_cm", channel_major
        else:
            rows = min(CONV_ROWS, pixels)
            patches = ctx.scratch(rows * w.shape[1], "patches", dtype="uint8")
            driver, gemm = "mlcc_qs8_conv_nchw", gemm_for(ctx.target)
        for function in (driver, gemm):
            if function:
                ctx.uses_kernel(function)
        geometry = ", ".join(str(int(v)) for v in (
            x.shape[1], in_h, in_w, out_h, out_w, *a["kernel"], *a["stride"], *a["dilation"], *a["pad_begin"],
            a["group"], w.shape[0] // int(a["group"])))
        ctx.emit("ops/quantized_conv.c.j2", requant=emit_requant(ctx, node), gemm=gemm, driver=driver,
                 geometry=geometry, batch=x.shape[0], x=ctx.ptr(x), x_size=x.size // x.shape[0],
                 y=ctx.ptr(y), y_size=y.size // y.shape[0], x_zero=int(a["x_zero"]) & 0xFF, a_flip=int(a["a_flip"]),
                 w=ctx.ptr(w), ldw=w.shape[1], rows=rows, patches=patches)

    def flops(self, node: Node) -> int:
        taps = int(node.attrs["kernel"][0]) * int(node.attrs["kernel"][1])
        group_in = node.inputs[0].shape[1] // int(node.attrs["group"])
        return 2 * node.outputs[0].size * group_in * taps


def _spatial(shape: tuple[int, ...]) -> tuple[int, int]:
    return (1, shape[2]) if len(shape) == 3 else (shape[2], shape[3])
