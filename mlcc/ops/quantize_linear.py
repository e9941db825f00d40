"""QuantizeLinear: y = saturate(round(x / scale) + zero_point), rounding half to even (rintf in the default
rounding mode), per tensor, per axis or per block (see _quant). The output type is the zero point's, else
`output_dtype` (opset 21), else uint8. Float8 and 4-bit outputs are not supported.
"""

from __future__ import annotations

import numpy as np

from .. import cnames, kernels
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._quant import OUTPUT_PERM, PerTensorChannelsLast, broadcast_param, param_regions, quant_axis, quant_range

PLANES_KERNEL = "mlcc_qs8_quantize_planes"  # runtime_c/kernels/qs8-quantize
FLOAT_EXACT = 2**24  # integers up to this magnitude are exact in float: clamp in float, else in double


@register
class QuantizeLinear(PerTensorChannelsLast, Op):
    op_type = "QuantizeLinear"
    quantization = "quantize"
    attrs = {"axis": 1, "saturate": 1, "block_size": 0, "output_dtype": 0, "precision": 0}

    def reference(self, node: Node, inputs):
        """numpy, so folding works at every opset; rounds half to even and saturates, as the spec says."""
        x, scale = inputs[0], inputs[1]
        zero = inputs[2] if len(inputs) > 2 and inputs[2] is not None else None
        y = node.outputs[0]
        lo, hi = quant_range(y.dtype, node)
        axis, block_size = quant_axis(node)
        value = np.rint(x.astype(np.float32) / broadcast_param(scale, x.shape, axis, block_size).astype(np.float32))
        if zero is not None:
            value = value + broadcast_param(zero, x.shape, axis, block_size).astype(np.float64)
        y_value = np.clip(value, lo, hi).astype(y.dtype)
        perm = node.attrs.get(OUTPUT_PERM)
        return [y_value if perm is None else np.ascontiguousarray(y_value.transpose(perm))]

    def writes_transposed(self, node: Node) -> bool:
        """Can it store its output transposed (passes/choose_layout: a graph input's QuantizeLinear writes the
        channels-last region's 8-bit input in its one pass, no layout Transpose after it)? Per tensor: each
        element alone, so any order of them."""
        return self.runs_channels_last(node) and OUTPUT_PERM not in node.attrs

    def write_transposed(self, node: Node, perm: list[int]) -> None:
        node.attrs[OUTPUT_PERM] = [int(p) for p in perm]

    def _quantizes_planes(self, node: Node, ctx) -> bool:
        """An RGB image's float planes written channels-last in 8 bits, on a target with an ISA form of the
        kernel (elsewhere the compiler vectorises the loop nest as well as the reference would)."""
        x, y = node.inputs[0], node.outputs[0]
        return (node.attrs.get(OUTPUT_PERM) == [0, 2, 3, 1] and x.dtype == np.float32
                and all(isinstance(d, int) for d in x.shape) and x.shape[1] == 3
                and y.dtype in (np.uint8, np.int8) and kernels.kernel(ctx.target, PLANES_KERNEL).where == "isa")

    def lower(self, node: Node, ctx) -> None:
        x, scale, zero = node.inputs[0], node.inputs[1], node.input(2)
        y = node.outputs[0]
        if x.dtype not in (np.float32, np.int32) or scale.dtype != np.float32:
            raise UnsupportedError(f"QuantizeLinear of {x.type_str()} by {scale.type_str()} (float32 scales)", node.where())
        lo, hi = quant_range(y.dtype, node)
        if self._quantizes_planes(node, ctx):
            image = x.shape[1] * x.shape[2] * x.shape[3]
            bytes_of_y = ctx.ptr(y) if y.dtype == np.uint8 else f"(uint8_t *){ctx.ptr(y)}"
            images = [(ctx.ptr(x) + (f" + {n * image}" if n else ""), bytes_of_y + (f" + {n * image}" if n else ""))
                      for n in range(x.shape[0])]
            ctx.emit("ops/quantize_planes.c.j2", kernel=ctx.kernel(PLANES_KERNEL), images=images, planes=x.shape[1],
                     pixels=x.shape[2] * x.shape[3], scale=ctx.ptr(scale),
                     zero=f"(float){ctx.ptr(zero)}[0]" if zero is not None else "0.0f",
                     lo=cnames.float_literal(lo), hi=cnames.float_literal(hi))
            return
        rounded = "rintf(x / s)" if x.dtype == np.float32 else "rintf((float)x / s)"
        if max(-lo, hi) < FLOAT_EXACT:
            # clamped by comparisons (NaN to lo, as fmaxf) and converted through int32: both vectorise to single
            # instructions where fminf/fmaxf and a float-to-uint8 conversion do not (wasm32: 5x the time)
            value = f"{rounded} + (float)z" if zero is not None else rounded
            low, high = cnames.float_literal(lo), cnames.float_literal(hi)
            emit_quant(node, ctx, f"({ctx.c_type(y)})(int32_t)(v > {low} ? (v < {high} ? v : {high}) : {low})", scale, zero,
                       value=value)
            return
        value = f"(double){rounded} + (double)z" if zero is not None else f"(double){rounded}"
        emit_quant(node, ctx, f"({ctx.c_type(y)})fmin(fmax({value}, {float(lo)!r}), {float(hi)!r})", scale, zero)


def emit_quant(node: Node, ctx, expr: str, scale, zero, value: str | None = None) -> None:
    """y[i] = expr over x = x[i], s = its scale and z = its zero point (when given), and v = value (when given)."""
    x, y = node.inputs[0], node.outputs[0]
    if zero is not None and tuple(zero.shape) != tuple(scale.shape):
        raise UnsupportedError(f"zero point {zero.type_str()} and scale {scale.type_str()} differ in shape", node.where())
    axis, block_size = quant_axis(node)
    nests = param_regions(node, x, scale, axis, block_size)
    for nest in nests:
        y_index = nest.index[2] if len(nest.index) > 2 else nest.index[0]
        ctx.emit("ops/quantize.c.j2", extents=nest.extents, x_index=nest.index[0], p_index=nest.index[1], y_index=y_index,
                 p_depth=nest.depth[1], alone=len(nests) == 1,
                 expr=expr, value=value,
                 x=ctx.ptr(x), y=ctx.ptr(y), scale=ctx.ptr(scale), zero=ctx.ptr(zero) if zero is not None else None,
                 x_type=ctx.c_type(x), s_type=ctx.c_type(scale), z_type=ctx.c_type(zero) if zero is not None else "")

