"""Requantize (mlcc domain, made by passes/lower_quantized_islands): an 8-bit tensor from one scale and zero
point to another, y = clamp(zy + round((x - zx) * sx / sy)), the ratio as a fixed-point multiplier and right
shift (ops/_qs8.fixed_point), rounding as qs8-gemm's requantization does. It lets a Concat whose inputs carry
other scales than its output run on the integers.

Per channel (inputs 1 and 2: int32 multipliers and offsets, shaped to broadcast along the channel axis
as a BatchNormalization's [C, 1, 1] or channels-last [C]): y = clamp(zy + round(((x - zx) * m[c] + o[c]) *
2^-shift)), one shift for all channels: a per-channel affine map between DequantizeLinear and QuantizeLinear
(an unfolded BatchNormalization) on the 8-bit values, rounded once (passes/lower_quantized_islands).

Channels-last, a per-channel Requantize writes its output with its channels permuted where a channel shuffle
follows (Op.writes_permuted_channels, passes/fold_channel_permutations) and transposes the channels seen as a
rows x columns matrix (attribute channel_transpose): each pixel is requantized into a buffer in its channels'
order, then stored transposed, so the output may still overwrite the input (the 8-bit ShuffleNet's shuffle
copies go).
Both in 32-bit arithmetic. The input has 256 codes, so the map is known at build time code by code: where one
multiplier and offset per channel over one shift of at most 30 bits reproduce it on every code, clamped
(narrow_affine: searched near the exact multiplier, checked on all 256), the loop is one 32-bit multiply-add
and a shift an element; else ops/_qs8's split_sum (the parts as tables, twice the work), else int64."""

from __future__ import annotations

import numpy as np

from ..ir import Node, Value
from . import Op, register
from ._broadcast import loop_nest
from ._qs8 import split_c, split_sum
from .quantized_mat_mul import DOMAIN


def _narrowest(data) -> np.dtype:
    values = np.asarray(data, np.int64)
    fits = values.size == 0 or (values.min() >= -(2**15) and values.max() < 2**15)
    return np.dtype(np.int16) if fits else np.dtype(np.int32)


def _transposition(order: np.ndarray) -> tuple[int, int] | None:
    """(rows, columns) when the order transposes the channels seen as a rows x columns matrix (a channel shuffle):
    stored channel j = c * rows + r holds channel r * columns + c."""
    order = np.asarray(order).reshape(-1)
    n = order.size
    for rows in range(2, n):
        if n % rows == 0 and np.array_equal(order, np.arange(n).reshape(rows, n // rows).T.reshape(-1)):
            return rows, n // rows
    return None


def narrow_affine(x_dtype, x_zero: int, multiplier, offset, shift: int, y_zero: int, y_min: int, y_max: int,
                  spread: int = 4) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(m, o, s) with clamp(floor((code * m + o) / 2^s)) equal to the Requantize's exact value on every code of
    x_dtype, for each channel (m and o per channel, shaped as `multiplier`), and |code * m + o| < 2^30 for every
    code (an int32 sum, non-negative with 2^30 added); None if no s from the largest that keeps that range down
    to 8 has such an m within `spread` of multiplier / 2^(shift - s) for every channel. floor(... / 2^s) then
    drops the offset's rounding term and y_zero into o, and the input's zero point too (the raw code times m)."""
    info = np.iinfo(x_dtype)
    codes = np.arange(info.min, info.max + 1, dtype=np.int64)
    big = np.asarray(multiplier, np.int64).reshape(-1)
    total = (codes[None] - x_zero) * big[:, None] + np.asarray(offset, np.int64).reshape(-1, 1) + (1 << (shift - 1))
    exact = (total >> shift) + y_zero  # before the clamp
    y = np.clip(exact, y_min, y_max)
    limit = 1 << 30
    top = min(shift, 30 - int(np.ceil(np.log2(np.abs(exact).max() + 2))))
    steps = np.arange(-spread, spread + 1)
    nearest_first = np.argsort(np.abs(steps), kind="stable")
    rows = np.arange(big.size)
    for s in range(top, 7, -1):
        # code * m + o within [lo, hi]: the value's step, or anything below (above) a code clamped to y_min (y_max)
        lo = np.where(y > y_min, y << s, -limit)[:, None, :]
        hi = np.where(y < y_max, ((y + 1) << s) - 1, limit - 1)[:, None, :]
        m = (big >> (shift - s))[:, None] + steps[None, :]
        low = (lo - codes * m[:, :, None]).max(axis=2)
        high = (hi - codes * m[:, :, None]).min(axis=2)
        fits = low <= high
        if not fits.any(axis=1).all():
            continue
        pick = nearest_first[np.argmax(fits[:, nearest_first], axis=1)]
        m, o = m[rows, pick], (low[rows, pick] + high[rows, pick]) // 2
        if np.abs(codes[None] * m[:, None] + o[:, None]).max() < limit and np.abs(o).max() < limit:
            shape = np.shape(multiplier)
            return m.reshape(shape), o.reshape(shape), s
    return None


MAX_BUFFERED_CHANNELS = 4096  # a pixel's bytes on the stack where the output is written permuted


@register
class Requantize(Op):
    op_type = "Requantize"
    domain = DOMAIN
    elementwise = True  # element i from element i: runs channels-last as its neighbours do
    in_place = True

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        a = node.attrs
        zero = int(a["x_zero"])
        x_offset = f" - {zero}" if zero > 0 else f" + {-zero}" if zero < 0 else ""
        shift, y_zero = int(a["shift"]), int(a["y_zero"])
        clamp = {"y_min": int(a["y_min"]), "y_max": int(a["y_max"])}
        per_channel = node.input(1) is not None
        narrow = narrow_affine(x.dtype, zero, node.inputs[1].data if per_channel else [int(a["multiplier"])],
                               node.inputs[2].data if per_channel else [0], shift, y_zero, **clamp)
        if narrow is not None:  # code * m + o, plus 2^30 in o: the sum non-negative, a logical shift floors it
            m, o, s = narrow
            unbias = 2 ** (30 - s)
        if per_channel:
            multiplier, offset = node.inputs[1], node.inputs[2]
            swap = a.get("channel_transpose")
            nest = loop_nest(y.shape, [x.shape, multiplier.shape])
            if swap:  # pixels of channels: each pixel requantized into a buffer, stored transposed
                channels = y.shape[-1]
                nest = loop_nest((y.size // channels, channels), [(y.size // channels, channels), (channels,)])
            # split at bit 15 at most: the parts' tables in int16 where they fit (the multipliers are below 2^30:
            # passes/lower_quantized_islands), 8 bytes a channel as the multiplier and offset
            plan = split_sum([multiplier.data], offset.data, shift, widest=15)
            split = None
            if narrow is not None:
                index = nest.operand_index[1]
                m_table = ctx.constant(Value(f"{multiplier.name}_narrow", _narrowest(m), multiplier.shape, m.astype(_narrowest(m))))
                o_table = ctx.constant(Value(f"{offset.name}_narrow", np.dtype(np.int32), multiplier.shape, (o + 2**30).astype(np.int32)))
                narrow = {"m": f"{m_table}[{index}]", "o": f"{o_table}[{index}]", "shift": s, "unbias": unbias}
            elif plan is not None:  # each part a table of the channels, read as the multipliers are, in the
                index = nest.operand_index[1]  # narrowest of int16 / int32 that holds it
                tables = {part: ctx.constant(Value(f"{source.name}_{part.split('_')[0]}", _narrowest(data), multiplier.shape,
                                                   np.asarray(data, np.int64).astype(_narrowest(data)).reshape(multiplier.shape)))
                          for part, source, data in (("high", multiplier, plan["high"][0]), ("low", multiplier, plan["low"][0]),
                                                     ("high_offset", offset, plan["high_offset"]),
                                                     ("low_offset", offset, plan["low_offset"]))}
                split = split_c(plan, ["x"], [f"{tables['high']}[{index}]"], [f"{tables['low']}[{index}]"],
                                f"{tables['high_offset']}[{index}]", f"{tables['low_offset']}[{index}]", y_zero)
            ctx.emit("ops/requantize_channels.c.j2", nest=nest, x=ctx.ptr(x), y=ctx.ptr(y), y_ctype=ctx.c_type(y), narrow=narrow,
                     swap=[int(v) for v in swap] if swap else None, channels=y.shape[-1],
                     x_offset=x_offset, multiplier=None if split or narrow else ctx.ptr(multiplier),
                     offset=None if split or narrow else ctx.ptr(offset), shift=shift,
                     split=split, round=2 ** (shift - 1) + 2 ** 62, unbias=2 ** (62 - shift) - y_zero,
                     y_min=int(a["y_min"]), y_max=int(a["y_max"]))
            return
        if narrow is not None:
            narrow = {"m": str(int(m[0])), "o": str(int(o[0]) + 2**30), "shift": s, "unbias": unbias}
        plan = split_sum([int(a["multiplier"])], 0, shift)
        split = plan and split_c(plan, ["x"], [str(int(plan["high"][0]))], [str(int(plan["low"][0]))],
                                 str(int(plan["high_offset"])), str(int(plan["low_offset"])), y_zero)
        ctx.emit("ops/requantize.c.j2", count=x.size, x=ctx.ptr(x), y=ctx.ptr(y), x_ctype=ctx.c_type(x), narrow=narrow,
                 y_ctype=ctx.c_type(y), x_offset=x_offset, multiplier=int(a["multiplier"]), split=split,
                 shift=shift, y_zero=y_zero, y_min=int(a["y_min"]), y_max=int(a["y_max"]))

    # --- a channel shuffle after it (passes/fold_channel_permutations) ------------------------------------
    def writes_permuted_channels(self, node: Node, order: np.ndarray, axis: int) -> bool:
        """Per channel and channels-last (the channels innermost: a pixel's are buffered), not yet permuted, the
        order a transposition of the channels (a channel shuffle's)."""
        y = node.outputs[0]
        return (node.input(1) is not None and not node.attrs.get("channel_transpose") and len(y.shape) >= 2
                and axis == len(y.shape) - 1 and node.inputs[1].shape == (y.shape[-1],)
                and y.shape[-1] <= MAX_BUFFERED_CHANNELS and _transposition(order) is not None)

    def write_permuted_channels(self, node: Node, order: np.ndarray, axis: int, constant) -> None:
        node.attrs["channel_transpose"] = list(_transposition(order))

    def flops(self, node: Node) -> int:
        return 0  # integer work, as the copies of the Concat it feeds
