"""Shared by Resize and Upsample: per-axis source taps computed at build time, rendered as one gather loop.

For every output coordinate of every axis we compute, in float32 as onnxruntime does, the source
coordinate, then its taps: one source index for nearest, two indices and their weights for linear. The
tables become `static const` arrays; the C (templates/ops/resample.c.j2) loops over the output, reading
x at the sum of the axes' tap offsets and weighting them, so it does no coordinate arithmetic at all.
Leading and trailing axes that are copied unchanged are not tabled: they become an outer batch loop and an
inner contiguous run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from ._copy import emit_memcpy

f32 = np.float32

COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nearest")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")  # simple: before opset 11
MODES = ("nearest", "linear")


@dataclass
class Taps:
    index: np.ndarray  # (out_len, taps) source indices along the axis
    weight: np.ndarray | None  # (out_len, taps) float32, None for one tap of weight 1

    @property
    def identity(self) -> bool:
        return self.weight is None and np.array_equal(self.index[:, 0], np.arange(len(self.index)))


def output_shape(in_shape: tuple[int, ...], scales: list[float]) -> tuple[int, ...]:
    """floor(in * scale) per axis, the product taken in float32 (onnxruntime's rule)."""
    return tuple(int(f32(s) * f32(n)) for s, n in zip(scales, in_shape))


def source_coordinates(out_len: int, in_len: int, scale: float, mode: str) -> np.ndarray:
    """Each output coordinate's position on the input axis, in float32."""
    o = np.arange(out_len, dtype=f32)
    s = f32(scale)
    half = f32(0.5)
    if mode == "half_pixel":
        return (o + half) / s - half
    if mode == "half_pixel_symmetric":
        adjustment = f32(out_len) / (s * f32(in_len))
        offset = f32(in_len) / f32(2) * (f32(1) - adjustment)
        return offset + (o + half) / s - half
    if mode == "pytorch_half_pixel":
        return (o + half) / s - half if out_len > 1 else np.zeros(out_len, f32)
    if mode == "align_corners":
        return o * f32(in_len - 1) / f32(out_len - 1) if out_len > 1 else np.zeros(out_len, f32)
    if mode == "asymmetric":
        return o / s
    return (o + half) / s  # tf_half_pixel_for_nearest


def axis_taps(mode: str, in_len: int, out_len: int, scale: float, coordinate_mode: str, nearest_mode: str) -> Taps:
    x = source_coordinates(out_len, in_len, scale, coordinate_mode)
    if mode == "nearest":
        whole = np.floor(x)
        if nearest_mode == "round_prefer_floor":
            index = np.where(x - whole == f32(0.5), whole, np.floor(x.astype(np.float64) + 0.5))
        elif nearest_mode == "round_prefer_ceil":
            index = np.floor(x.astype(np.float64) + 0.5)
        elif nearest_mode == "floor":
            index = whole
        elif nearest_mode == "ceil":
            index = np.ceil(x)
        else:  # "simple": ceil when shrinking, else truncate
            index = np.ceil(x) if f32(scale) < 1 else np.trunc(x)
        index = np.clip(index, 0, in_len - 1).astype(np.int64)
        return Taps(index[:, None], None)
    x = np.clip(x, f32(0), f32(in_len - 1))
    lo = np.minimum(x.astype(np.int64), in_len - 1)
    hi = np.minimum(lo + 1, in_len - 1)
    w_hi = np.abs(x - lo.astype(f32)).astype(f32)
    w_lo = np.abs(x - hi.astype(f32)).astype(f32)
    same = lo == hi
    w_lo[same], w_hi[same] = f32(0.5), f32(0.5)
    if np.all(w_hi[~same] == 0) and np.all(w_lo[~same] == 1):  # every coordinate lands on a source pixel
        return Taps(lo[:, None], None)
    return Taps(np.stack([lo, hi], axis=1), np.stack([w_lo, w_hi], axis=1))


def lower_resample(node: Node, ctx, mode: str, scales: list[float], coordinate_mode: str, nearest_mode: str) -> None:
    x, y = node.inputs[0], node.outputs[0]
    if mode not in MODES:
        raise UnsupportedError(f"mode {mode!r} is not supported (only nearest and linear)", node.where())
    if coordinate_mode not in COORDINATE_MODES:
        raise UnsupportedError(f"coordinate_transformation_mode {coordinate_mode!r} is not supported", node.where())
    if mode == "nearest" and nearest_mode not in NEAREST_MODES:
        raise UnsupportedError(f"nearest_mode {nearest_mode!r} is not supported", node.where())
    if mode == "linear" and x.dtype != np.float32:
        raise UnsupportedError(f"linear resize of {x.dtype.name} is not supported yet", node.where())
    if y.size == 0:
        return
    if x.size >= 2**31:
        raise UnsupportedError("inputs of 2^31 elements or more are not supported", node.where())
    taps = [axis_taps(mode, n_in, n_out, s, coordinate_mode, nearest_mode)
            for n_in, n_out, s in zip(x.shape, y.shape, scales)]
    moved = [d for d, t in enumerate(taps) if not t.identity]
    if not moved:  # every axis maps onto itself
        emit_memcpy(ctx, y, x)
        return
    first, last = moved[0], moved[-1]
    batch = int(np.prod(x.shape[:first], dtype=np.int64))
    inner = int(np.prod(x.shape[last + 1:], dtype=np.int64))
    in_strides = [int(np.prod(x.shape[d + 1:], dtype=np.int64)) for d in range(len(x.shape))]
    out_strides = [int(np.prod(y.shape[d + 1:], dtype=np.int64)) for d in range(len(y.shape))]
    axes = []
    for level, d in enumerate(range(first, last + 1)):
        t = taps[d]
        offsets = (t.index * in_strides[d]).reshape(-1)
        axes.append(dict(
            var=f"o{level}", extent=y.shape[d], taps=t.index.shape[1], out_stride=out_strides[d],
            offsets=ctx.static_array(f"src_offsets{level}", "int32_t", offsets, f"axis {d}: input offsets per output"),
            weights=None if t.weight is None else ctx.static_array(
                f"weights{level}", "float", t.weight.reshape(-1), f"axis {d}: tap weights per output"),
        ))
    ctx.emit("ops/resample.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctx.c_type(x), batch=batch, inner=inner,
             in_block=int(np.prod(x.shape[first:], dtype=np.int64)), out_block=int(np.prod(y.shape[first:], dtype=np.int64)),
             axes=axes, expr=_expression(axes, "c" if inner > 1 else ""),
             out=" + ".join(a["var"] if a["out_stride"] == 1 else f"{a['var']} * {a['out_stride']}u" for a in axes))


def _expression(axes: list[dict], inner_var: str) -> str:
    """The C expression of one output: a weighted sum over every axis's taps of src[sum of offsets]."""
    def level(i: int, offsets: list[str]) -> str:
        if i == len(axes):
            terms = [*offsets, inner_var] if inner_var else offsets
            return f"src[{' + '.join(terms)}]"
        a = axes[i]
        if a["taps"] == 1:
            return level(i + 1, [*offsets, f"p{i}"])
        parts = [level(i + 1, [*offsets, f"p{i}[{t}]"]) for t in range(a["taps"])]
        return "(" + " + ".join(f"w{i}[{t}] * {sub}" for t, sub in enumerate(parts)) + ")"

    expr = level(0, [])
    return expr[1:-1] if expr.startswith("(") else expr
