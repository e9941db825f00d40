"""Shared by Resize and Upsample: per-axis source taps computed at build time, rendered as one gather loop.

For every output coordinate of every axis we compute the source coordinate, then its taps: one source
index for nearest; for linear and cubic (with or without antialias) the reference's window of source
indices, clamped to the edge, with their weights. The tables become `static const` arrays; the C
(templates/ops/resample.c.j2) loops over the output, reading x at the sum of the axes' tap offsets and
weighting them, so it does no coordinate arithmetic at all. Leading and trailing axes that are copied
unchanged are not tabled: they become an outer batch loop and an inner contiguous run.

Nearest coordinates are computed in float32 (onnxruntime's rule, which decides ties); weighted modes in
float64 as onnx's reference does, their weights stored as float32.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .. import cnames
from ..errors import UnsupportedError
from ..ir import Node
from ._copy import emit_memcpy, fill_literal

f32 = np.float32

# tf_half_pixel_for_nn is Resize-11's spelling (tf2onnx writes it; onnxruntime takes it at every opset);
# tf_half_pixel_for_nearest, an older name mlcc accepted, means the same
COORDINATE_MODES = ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                    "tf_half_pixel_for_nn", "tf_half_pixel_for_nearest", "tf_crop_and_resize")
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple")  # simple: before opset 11
MODES = ("nearest", "linear", "cubic")
EXPRESSION_TERMS = 16  # up to this many taps per output, the weighted sum is one unrolled expression


@dataclass
class Interpolation:
    """How one node resamples, beside its per-axis scales."""
    mode: str
    coordinate_mode: str
    nearest_mode: str = "round_prefer_floor"
    cubic_coeff_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False  # linear and cubic only: nearest ignores it, as the spec says
    extrapolation_value: float = 0.0
    roi: list[tuple[float, float]] | None = None  # per axis (start, end), tf_crop_and_resize only


@dataclass
class Taps:
    index: np.ndarray  # (out_len, taps) source indices along the axis
    weight: np.ndarray | None  # (out_len, taps) float32, None for one tap of weight 1
    outside: np.ndarray | None = None  # (out_len,) bool: the output takes the extrapolation value

    @property
    def identity(self) -> bool:
        return (self.weight is None and self.outside is None
                and np.array_equal(self.index[:, 0], np.arange(len(self.index))))


def output_shape(in_shape: tuple[int, ...], scales: list[float]) -> tuple[int, ...]:
    """floor(in * scale) per axis, the product taken in float32 (onnxruntime's rule)."""
    return tuple(int(f32(s) * f32(n)) for s, n in zip(scales, in_shape))


def source_coordinates(out_len: int, in_len: int, scale: float, mode: str, roi: tuple[float, float] = (0.0, 1.0),
                       dtype=f32) -> np.ndarray:
    """Each output coordinate's position on the input axis. The resized length is in * scale, unrounded."""
    t = np.dtype(dtype).type
    o = np.arange(out_len, dtype=dtype)
    s, half, n = t(scale), t(0.5), t(in_len)
    length = s * n
    if mode == "half_pixel":
        return (o + half) / s - half
    if mode == "half_pixel_symmetric":
        offset = n / t(2) * (t(1) - t(out_len) / length)
        return offset + (o + half) / s - half
    if mode == "pytorch_half_pixel":
        return (o + half) / s - half if length != 1 else np.full(out_len, -half, dtype)
    if mode == "align_corners":
        return o * (n - t(1)) / (length - t(1)) if length != 1 else np.zeros(out_len, dtype)
    if mode == "asymmetric":
        return o / s
    if mode == "tf_crop_and_resize":
        start, end = t(roi[0]), t(roi[1])
        if length == 1:
            return np.full(out_len, (end - start) * (n - t(1)) / t(2) + start * (n - t(1)), dtype)
        return o * (end - start) * (n - t(1)) / (length - t(1)) + start * (n - t(1))
    return (o + half) / s  # tf_half_pixel_for_nn


def _nearest_taps(x: np.ndarray, in_len: int, scale: float, nearest_mode: str) -> np.ndarray:
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
    return np.clip(index, 0, in_len - 1).astype(np.int64)[:, None]


def _cubic(d: np.ndarray, a: float) -> np.ndarray:
    """The cubic convolution kernel at distances d."""
    d = np.abs(d)
    near = ((a + 2) * d - (a + 3)) * d * d + 1
    far = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def _coefficients(ratio: np.ndarray, scale: float, how: Interpolation) -> np.ndarray:
    """(out_len, n) weights of the window starting left of each coordinate; ratio in (0, 1]."""
    if not how.antialias:
        if how.mode == "linear":
            return np.stack([1 - ratio, ratio], axis=1)
        return _cubic(np.arange(-1, 3)[None, :] - ratio[:, None], how.cubic_coeff_a)
    scale = min(scale, 1.0)  # antialias widens the kernel when shrinking only
    if how.mode == "linear":
        start = int(np.floor(-1 / scale) + 1)
        at = (np.arange(start, 2 - start)[None, :] - ratio[:, None]) * scale
        coeffs = np.clip(1 - np.abs(at), 0, 1)
    else:
        start = int(np.floor(-2 / scale) + 1)
        coeffs = _cubic(scale * (np.arange(start, 2 - start)[None, :] - ratio[:, None]), how.cubic_coeff_a)
    return coeffs / coeffs.sum(axis=1, keepdims=True)


def _weighted_taps(x: np.ndarray, in_len: int, scale: float, how: Interpolation) -> Taps:
    """onnx's reference window: the n source indices nearest x (ties to the smaller), edge-clamped."""
    whole = np.floor(x)
    ratio = np.where(x == whole, 1.0, x - whole)
    coeffs = _coefficients(ratio, scale, how)
    n = coeffs.shape[1]
    pad = (n + 1) // 2
    padded = x + pad
    p = np.floor(padded).astype(np.int64)
    frac = padded - p
    if n % 2 == 0:
        first = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        first = np.where(frac <= 0.5, -((n - 1) // 2), -((n - 1) // 2) + 1)
    index = (p + first - pad)[:, None] + np.arange(n)[None, :]
    if how.exclude_outside:
        coeffs = np.where((index < 0) | (index >= in_len), 0.0, coeffs)
        total = coeffs.sum(axis=1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    index = np.clip(index, 0, in_len - 1)
    weight = coeffs.astype(f32)
    single = (weight == 1).sum(axis=1) == 1
    if np.all(single & ((weight == 0).sum(axis=1) == n - 1)):  # every output copies one source pixel
        return Taps(index[np.arange(len(index)), np.argmax(weight, axis=1)][:, None], None)
    return Taps(index, weight)


def axis_taps(how: Interpolation, in_len: int, out_len: int, scale: float, roi: tuple[float, float]) -> Taps:
    if f32(scale) == 1 and out_len == in_len and how.coordinate_mode != "tf_crop_and_resize":
        # copied, as onnxruntime does: of these modes only tf_half_pixel_for_nn would shift it by half a pixel
        return Taps(np.arange(in_len)[:, None], None)
    dtype = f32 if how.mode == "nearest" else np.float64
    x = source_coordinates(out_len, in_len, scale, how.coordinate_mode, roi, dtype)
    if how.mode == "nearest":
        taps = Taps(_nearest_taps(x, in_len, scale, how.nearest_mode), None)
    else:
        taps = _weighted_taps(x, in_len, scale, how)
    if how.coordinate_mode == "tf_crop_and_resize":
        outside = (x < 0) | (x > in_len - 1)
        if outside.any():
            taps.outside = outside
    return taps


def _check(node: Node, how: Interpolation) -> None:
    x = node.inputs[0]
    if how.mode not in MODES:
        raise UnsupportedError(f"mode {how.mode!r} is not supported", node.where())
    if how.coordinate_mode not in COORDINATE_MODES:
        raise UnsupportedError(f"coordinate_transformation_mode {how.coordinate_mode!r} is not supported", node.where())
    if how.mode == "nearest" and how.nearest_mode not in NEAREST_MODES:
        raise UnsupportedError(f"nearest_mode {how.nearest_mode!r} is not supported", node.where())
    if how.mode != "nearest" and x.dtype not in (np.float32, np.float64):
        raise UnsupportedError(f"{how.mode} resize of {x.dtype.name} is not supported yet", node.where())
    if x.size >= 2**31:
        raise UnsupportedError("inputs of 2^31 elements or more are not supported", node.where())


def lower_resample(node: Node, ctx, how: Interpolation, scales: list[float]) -> None:
    x, y = node.inputs[0], node.outputs[0]
    _check(node, how)
    if y.size == 0:
        return
    rois = how.roi or [(0.0, 1.0)] * len(scales)
    taps = [axis_taps(how, n_in, n_out, s, roi) for n_in, n_out, s, roi in zip(x.shape, y.shape, scales, rois)]
    moved = [d for d, t in enumerate(taps) if not t.identity]
    if not moved:  # every axis maps onto itself
        emit_memcpy(ctx, y, x)
        return
    first, last = moved[0], moved[-1]
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
            outside=None if t.outside is None else ctx.static_array(
                f"outside{level}", "uint8_t", t.outside.astype(np.uint8), f"axis {d}: 1 where the output extrapolates"),
        ))
    inner_var = "c" if inner > 1 else ""
    guard = " || ".join(f"{a['outside']}[{a['var']}]" for a in axes if a["outside"])
    _emit_gather(ctx, x, y, axes, first, last, inner, inner_var, guard, fill_literal(how.extrapolation_value, x.dtype))


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


def _tap_sum(axes: list[dict], inner_var: str) -> dict:
    """For wide windows (antialias): loops over each multi-tap axis's taps accumulating weight * src."""
    loops = [dict(var=f"t{i}", taps=a["taps"]) for i, a in enumerate(axes) if a["taps"] > 1]
    offsets = [f"p{i}[t{i}]" if a["taps"] > 1 else f"p{i}" for i, a in enumerate(axes)]
    weights = [f"w{i}[t{i}]" for i, a in enumerate(axes) if a["taps"] > 1]
    src = f"src[{' + '.join([*offsets, inner_var] if inner_var else offsets)}]"
    return dict(loops=loops, term=" * ".join([*weights, src]))


# --- run-time sizes ---------------------------------------------------------------------------------------
# The tables depend on the sizes, so with run-time extents each moved axis's taps are computed on every run
# into scratch (templates/ops/resample_taps.c.j2), in the same arithmetic as the build-time tables: nearest
# coordinates in float, weighted ones in double, both as onnxruntime and onnx's reference do.

RUN_TIME_COORDINATES = {  # C for the source coordinate of output o; s: the scale, n: the input length
    "half_pixel": "(o + half) / s - half",
    "pytorch_half_pixel": "length != 1 ? (o + half) / s - half : -half",
    "align_corners": "length != 1 ? o * (n - 1) / (length - 1) : 0",
    "asymmetric": "o / s",
    "half_pixel_symmetric": "n / 2 * (1 - (out_len / length)) + (o + half) / s - half",
    "tf_half_pixel_for_nn": "(o + half) / s",
    "tf_half_pixel_for_nearest": "(o + half) / s",
}
RUN_TIME_NEAREST = {  # C for the nearest source index of coordinate x (before clamping)
    "round_prefer_floor": "x - floorf(x) == 0.5f ? floorf(x) : floor((double)x + 0.5)",
    "round_prefer_ceil": "floor((double)x + 0.5)",
    "floor": "floorf(x)",
    "ceil": "ceilf(x)",
    "simple": "s < 1 ? ceilf(x) : truncf(x)",
}


def operand(size) -> str:
    """A size as a C operand: a size_t literal, or a run-time size's expression parenthesised when compound."""
    from .. import cexpr
    return cexpr.text(size) if cexpr.is_variable(size) else cexpr.literal(size)


def run_time_extents(node: Node) -> bool:
    from ..cexpr import is_variable
    return any(is_variable(d) for d in (*node.inputs[0].shape, *node.outputs[0].shape))


def lower_resample_run_time(node: Node, ctx, how: Interpolation, scales: list[float] | None) -> None:
    """Resize over run-time extents: nearest or linear (no antialias), any coordinate mode but
    tf_crop_and_resize. scales: the given ones, or None when sizes were given (each axis's scale is then
    out / in in float, computed on each run)."""
    from .. import cexpr

    x, y = node.inputs[0], node.outputs[0]
    _check(node, how)
    if how.mode not in ("nearest", "linear") or how.antialias or how.coordinate_mode not in RUN_TIME_COORDINATES:
        raise cexpr.VariableExtentError(f"{how.mode} resizing{' with antialias' if how.antialias else ''} in "
                                        f"{how.coordinate_mode} coordinates has its taps built at build time only")
    rank = len(x.shape)
    moved = [d for d in range(rank) if not (cexpr.same(x.shape[d], y.shape[d]) and (scales is None or scales[d] == 1))]
    if not moved:
        emit_memcpy(ctx, y, x)
        return
    first, last = moved[0], moved[-1]
    product = lambda dims: np.prod(dims, dtype=object) if dims else 1  # noqa: E731
    in_strides = [product(x.shape[d + 1:]) for d in range(rank)]
    out_strides = [product(y.shape[d + 1:]) for d in range(rank)]
    linear = how.mode == "linear"
    taps = 2 if linear else 1
    axes, tables = [], []
    for level, d in enumerate(range(first, last + 1)):
        extent = y.shape[d]
        offsets = ctx.scratch(4 * taps * cexpr.bound(extent), f"src_offsets{level}", np.int32)
        weights = ctx.scratch(4 * taps * cexpr.bound(extent), f"weights{level}") if linear else None
        scale = (f"(float){cexpr.text(extent)} / (float){cexpr.text(x.shape[d])}" if scales is None
                 else cnames.float_literal(scales[d]))
        tables.append(dict(axis=d, out_len=operand(extent), in_len=operand(x.shape[d]), scale=scale,
                           stride=operand(in_strides[d]), offsets=offsets, weights=weights))
        axes.append(dict(var=f"o{level}", extent=extent, taps=taps, out_stride=out_strides[d], offsets=offsets,
                         weights=weights, outside=None))
    inner = product(x.shape[last + 1:])
    inner_var = "c" if cexpr.is_variable(inner) or inner > 1 else ""
    coordinate = RUN_TIME_COORDINATES[how.coordinate_mode]
    uses = {name: re.search(r"\b" + name + r"\b", coordinate) is not None for name in ("n", "half", "length", "out_len")}
    for table in tables:
        ctx.emit("ops/resample_taps.c.j2", linear=linear, coordinate=coordinate, uses=uses,
                 nearest=RUN_TIME_NEAREST[how.nearest_mode], **table)
    _emit_gather(ctx, x, y, axes, first, last, inner, inner_var, "", fill_literal(0, x.dtype))


def _emit_gather(ctx, x, y, axes: list[dict], first: int, last: int, inner, inner_var: str, guard: str, fill: str) -> None:
    from .. import cexpr

    product = lambda dims: np.prod(dims, dtype=object) if dims else 1  # noqa: E731
    batch = product(x.shape[:first])  # the leading axes copied as they are
    terms = int(np.prod([a["taps"] for a in axes]))
    ctx.emit("ops/resample.c.j2", ctype=ctx.c_type(x), batch=batch, inner=inner, has_inner=bool(inner_var),
             src=cexpr.offset(ctx.ptr(x), ("b", product(x.shape[first:]))),
             dst=cexpr.offset(ctx.ptr(y), ("b", product(y.shape[first:]))),
             axes=axes, expr=_expression(axes, inner_var) if terms <= EXPRESSION_TERMS else None,
             tap_sum=None if terms <= EXPRESSION_TERMS else _tap_sum(axes, inner_var), guard=guard, fill=fill,
             out=cexpr.offset(None, *((a["var"], a["out_stride"]) for a in axes)))
