"""QuantizedAveragePool (mlcc domain, made by passes/lower_quantized_islands from DQ -> AveragePool or
GlobalAveragePool -> Q): the window's 8-bit values less the zero point summed in int32 (a tap in the padding
adds 0, the float pool's zero), then y = clamp(zy + round(sum * sx / (count * sy))) with the ratio
sx / (count * sy) as a fixed-point multiplier and right shift (ops/_qs8), or, where sx = sy (onnxruntime's
quantizer gives AveragePool its input's parameters), as sum / count by an int32 division. Ties round to
even, as the reference's rint: unlike a product of real-valued scales, a mean of integers lands on .5 often
(sum / count at equal scales, and exactly so: the division finds every tie; channels-last, a block's
channels divide at once in float32, exact for these sizes, and a product finds the ties). The arena keeps 8-bit tensors
on both sides (a float copy of the input was 4x the bytes).

A global pool is the window of the whole plane. Without count_include_pad a window clipped by the padding
divides by the taps inside the input: then the multiplier comes from a table indexed by that count, all
entries over one shift (the smallest count's multiplier in [2^30, 2^31), a larger count's with fewer bits:
still well inside the float32 reference's precision).

A tie of sum / count is rounded to even as the real-number semantics of DQ -> pool -> Q round it; onnxruntime's
unoptimised graph sums the float32 dequantized values (in its kernel's order) and lands on either side of .5:
a step from it at some ties (0.27% of ShuffleNet's first pooled values), none from the exact evaluation
(benchmarks/int8_exactness.py)."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._layout import LayoutAttribute, is_channels_last
from ._pool import KERNEL_DIMS, POOL_ATTRS, _taps_inside, _window_dims, geometry, pool_types
from ._qs8 import runs_channels_last as qs8_runs_channels_last
from .quantized_mat_mul import DOMAIN

EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))
SUM_BLOCK = 256  # int32 sums on the stack: 1 KiB


def _minus(value: str, zero: int) -> str:
    return f"{value} - {zero}" if zero > 0 else f"{value} + {-zero}" if zero < 0 else value


@register
class QuantizedAveragePool(LayoutAttribute, Op):
    op_type = "QuantizedAveragePool"
    domain = DOMAIN
    attrs = {**POOL_ATTRS, "dilations": None, "count_include_pad": 0}

    def runs_channels_last(self, node: Node) -> bool:
        x = node.inputs[0]
        return len(x.shape) == 4 and not x.is_const

    def runs_channels_last_on(self, node: Node, target) -> bool:
        """In the layout the target's int8 convolutions use, so an int8 region needs no transposes."""
        return qs8_runs_channels_last(target)

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        if x.dtype not in EIGHT_BIT or y.dtype not in EIGHT_BIT:
            raise UnsupportedError(f"{self.op_type} of {x.type_str()} -> {y.type_str()} (8-bit only)", node.where())
        a = node.attrs
        g = geometry(node)
        lead = KERNEL_DIMS - (len(x.shape) - 2)
        channels_last = is_channels_last(node)
        batch, channels = x.shape[0], x.shape[-1] if channels_last else x.shape[1]
        in_plane, out_plane = int(np.prod(g.inp)), int(np.prod(g.out))
        dims = _window_dims(g, lead)
        single = [g.out[d] == 1 for d in range(lead, KERNEL_DIMS)]  # (dims' extents are C text)
        for i, d in enumerate(dims):  # a dim with one output (a global pool's) needs no loop over it
            if single[i]:
                dilation, pad = g.dilation[lead + i], g.pad_begin[lead + i]
                d["tap"] = (f"k{i}" if dilation == 1 else f"k{i} * {dilation}") + (f" - {pad}" if pad else "")
        in_strides = [g.inp[1] * g.inp[2], g.inp[2], 1][lead:]
        out_strides = [g.out[1] * g.out[2], g.out[2], 1][lead:]
        pixel = channels if channels_last else 1  # elements from one pixel to the next

        def index(counter: str, strides: list[int], skip=()) -> str:
            terms = [f"{counter}{i} * {s * pixel}" if s * pixel != 1 else f"{counter}{i}"
                     for i, s in enumerate(strides) if i not in skip]
            return " + ".join(terms) or "0"

        # taps counted per output along each dim; the window's count is their product
        include_pad = bool(int(a.get("count_include_pad", 0)))
        tables = []
        for d in range(lead, KERNEL_DIMS):
            lo, hi = (-g.pad_begin[d], g.inp[d] + g.pad_end[d]) if include_pad else (0, g.inp[d])
            tables.append([_taps_inside(o * g.stride[d] - g.pad_begin[d], g.kernel[d], g.dilation[d], lo, hi)
                           for o in range(g.out[d])])
        counts = {int(np.prod(c)) for c in np.array(np.meshgrid(*tables, indexing="ij")).reshape(len(tables), -1).T}
        if min(counts) < 1:
            raise UnsupportedError(f"{self.op_type} with a window of no taps", node.where())
        ratio = float(a["scale_ratio"])
        # the largest multiplier in [2^30, 2^31); the pass keeps the ratio below 2^20, so the shift is above 9
        shift = min(61, 31 - int(np.frexp(ratio / min(counts))[1]))
        if max(counts) >= 2**23:  # |sum| < 2^31, times a multiplier < 2^31, stays below 2^62
            raise UnsupportedError(f"{self.op_type} over {max(counts)} elements (below 2^23)", node.where())
        divide = ratio == 1.0  # the same scale: sum / count rounded exactly, by an integer division
        if len(counts) == 1:
            count = next(iter(counts))
            count_c, multiplier = str(count), str(int(round(ratio / count * 2.0 ** shift)))
        else:
            count_c = " * ".join(
                f"{ctx.static_array(f'taps{i}', 'int32_t', table, f'spatial dim {i}: taps inside per output')}[o{i}]"
                for i, table in enumerate(tables))
            multiplier = "0"
            if not divide:
                by_count = [int(round(ratio / c * 2.0 ** shift)) if c in counts else 0 for c in range(max(counts) + 1)]
                multiplier = f"{ctx.static_array('multiplier', 'int32_t', by_count, f'sx / (count * sy) * 2^{shift}')}[count]"
        y_zero = int(a["y_zero"])
        whole_plane = all(single) and all(g.kernel[d] == g.inp[d] for d in range(lead, KERNEL_DIMS)) and \
            not any(d["in_padding"] for d in dims)
        if whole_plane:  # one loop over the plane
            dims, single = [dict(out=1, kernel=in_plane, extent=in_plane, tap="k0", in_padding=False)], [True]
            in_strides = out_strides = [1]
        # channels-last: the channels' sums side by side in a block of at most SUM_BLOCK (the inner loop runs
        # along contiguous bytes and vectorises; channel by channel it strode a pixel a step)
        block = max((b for b in range(1, min(channels, SUM_BLOCK) + 1) if channels % b == 0), default=0)
        ctx.emit("ops/quantized_average_pool.c.j2", batch=batch, channels=channels, block=block if channels_last else 0,
                 x_image=in_plane * channels, y_image=out_plane * channels,
                 x_channel=1 if channels_last else in_plane, y_channel=1 if channels_last else out_plane,
                 dims=dims, outs=[i for i in range(len(dims)) if not single[i]], x_index=index("i", in_strides),
                 y_index=index("o", out_strides, [i for i in range(len(dims)) if single[i]]),
                 x=ctx.ptr(x), y=ctx.ptr(y), x_ctype=ctx.c_type(x), y_ctype=ctx.c_type(y),
                 x_offset=_minus("", int(a["x_zero"])), count=count_c, count_varies=len(counts) > 1, divide=divide,
                 multiplier=multiplier, shift=shift, round=2 ** (shift - 1) + 2 ** 62, mask=2 ** shift - 1,
                 y_zero=y_zero, unbias=2 ** (62 - shift) - y_zero, y_min=int(a["y_min"]), y_max=int(a["y_max"]),
                 x_zero=int(a["x_zero"]), float_quotient=1025 * max(counts) < 2**24)

    def flops(self, node: Node) -> int:
        return 0  # integer work
