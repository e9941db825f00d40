"""Window geometry shared by MaxPool, AveragePool and LpPool, and their lowering: float32 max/average onto
the f32-pool kernels, everything else (other dtypes, MaxPool's Indices, LpPool) as plain loops rendered from
templates/ops/pool_loops.c.j2.

The kernels take up to three spatial dims (d, h, w); 1-D and 2-D pools pad the leading dims with extent 1.
Output extents and pads follow onnxruntime: SAME pads split the total as evenly as possible (the odd one
at the end for SAME_UPPER, at the start for SAME_LOWER); ceil_mode drops a last window that would start in
the end padding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cexpr
from ..cexpr import is_variable
from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from ._copy import fill_literal
from ._layout import channels_first_view, is_channels_last, to_channels_last
from ._spatial import spatial_ints

KERNEL_DIMS = 3
POOL_ATTRS = {"kernel_shape": None, "strides": None, "pads": None, "auto_pad": "NOTSET", "ceil_mode": 0}


@dataclass
class PoolGeometry:
    planes: int  # batch * channels
    inp: list[int]
    out: list[int]
    kernel: list[int]
    stride: list[int]
    dilation: list[int]
    pad_begin: list[int]
    pad_end: list[int]

    @property
    def taps(self) -> int:
        return int(np.prod(self.kernel))

    def fields(self) -> list[tuple[str, list[int]]]:
        """(name, values) per member of mlcc_pool_geometry, in declaration order."""
        return [("in", self.inp), ("out", self.out), ("kernel", self.kernel), ("stride", self.stride),
                ("dilation", self.dilation), ("pad_begin", self.pad_begin), ("pad_end", self.pad_end)]


def geometry(node: Node) -> PoolGeometry:
    if is_channels_last(node):
        node = channels_first_view(node)
    x = node.inputs[0]
    spatial = len(x.shape) - 2
    if not 1 <= spatial <= KERNEL_DIMS:
        raise UnsupportedError(f"{node.op_type} over {spatial} spatial dims (1 to {KERNEL_DIMS} supported)", node.where())
    if node.attrs.get("kernel_shape") is None:
        raise UnsupportedError("attribute 'kernel_shape' is required", node.where())
    kernel = spatial_ints(node, "kernel_shape", spatial, 1)
    stride = spatial_ints(node, "strides", spatial, 1)
    dilation = spatial_ints(node, "dilations", spatial, 1)
    if min(kernel + stride + dilation) < 1:
        raise UnsupportedError("kernel_shape, strides and dilations must be positive", node.where())
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise UnsupportedError(f"auto_pad={auto_pad!r}", node.where())
    pads = spatial_ints(node, "pads", 2 * spatial, 0) if auto_pad == "NOTSET" else [0] * (2 * spatial)
    if min(pads) < 0:
        raise UnsupportedError("negative pads are not supported", node.where())
    ceil_mode = bool(node.attrs.get("ceil_mode", 0))
    inp = list(x.shape[2:])
    out, pad_begin, pad_end = [], pads[:spatial], pads[spatial:]
    for i, (n, k, s, d) in enumerate(zip(inp, kernel, stride, dilation)):
        span = (k - 1) * d + 1
        if auto_pad.startswith("SAME"):
            out.append(-(-n // s))
            total = max(0, (out[i] - 1) * s + span - n)
            pad_begin[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pad_end[i] = total - pad_begin[i]
            continue
        room = n + pad_begin[i] + pad_end[i] - span
        if room < 0:
            raise ShapeError(f"the window ({span} wide) is larger than the padded input ({room + span}) along "
                             f"spatial dim {i}", node.where())
        out.append((-(-room // s) if ceil_mode else room // s) + 1)
        # a window starting in the end padding is dropped (onnxruntime; the spec from opset 22); none can when
        # the last window's start, below room + s, stays below n + pad_begin (so a run-time n needs no test)
        if ceil_mode and pad_end[i] + s > span and (out[i] - 1) * s >= n + pad_begin[i]:
            out[i] -= 1

    lead = KERNEL_DIMS - spatial

    def full(values: list[int], fill: int) -> list[int]:
        return [fill] * lead + [v if is_variable(v) else int(v) for v in values]

    planes = x.shape[0] * x.shape[1]
    return PoolGeometry(planes=planes if is_variable(planes) else int(planes), inp=full(inp, 1), out=full(out, 1),
                        kernel=full(kernel, 1), stride=full(stride, 1), dilation=full(dilation, 1),
                        pad_begin=full(pad_begin, 0), pad_end=full(pad_end, 0))


def _product(extents) -> int:
    """The product of whole numbers, run-time sizes among them."""
    out = 1
    for extent in extents:
        out = out * extent
    return out


def pool_types(node: Node) -> list[tuple[np.dtype, tuple[int, ...]]]:
    """Y's type, and the int64 Indices' when the node names one. Computed here rather than by onnx's
    shape inference, which before opset 22 keeps a ceil_mode window that starts in the end padding."""
    x = node.inputs[0]
    shape = (x.shape[0], *geometry(node).out[KERNEL_DIMS - (len(x.shape) - 2):])
    shape = to_channels_last((shape[0], x.shape[-1], *shape[1:])) if is_channels_last(node) else (shape[0], x.shape[1], *shape[1:])
    return [(x.dtype, shape), (np.dtype(np.int64), shape)][:len(node.outputs)]


def lower_pool(node: Node, ctx, kernel: str, count_include_pad: bool | None = None) -> None:
    """kernel: the NC[D][H]W kernel's name (runtime_c/kernels/f32-pool/manifest.toml); a channels-last node
    calls its _nhwc form, on the SIMD shim."""
    g = geometry(node)
    ctx.use_kernels("f32-pool")
    # ptrdiff_t members: plain numbers, or run-time sizes converted (the struct is then filled on each run)
    fields = [(name, [f"(ptrdiff_t)({v.c()})" if is_variable(v) else str(v) for v in values]) for name, values in g.fields()]
    run_time = any(is_variable(v) for _, values in g.fields() for v in values)
    if is_channels_last(node):
        x = node.inputs[0]
        parallel = ctx.parallel()  # output rows cut into tasks for NAME_run_parallel
        ctx.emit("ops/pool.c.j2", kernel=ctx.kernel(f"{kernel}_nhwc_parallel" if parallel else f"{kernel}_nhwc"),
                 parallel=parallel,
                 planes=f"{cexpr.literal(x.shape[0])}, {cexpr.literal(x.shape[-1])}", run_time=run_time,
                 fields=fields, count_include_pad=count_include_pad, x=ctx.ptr(x), y=ctx.ptr(node.outputs[0]))
        return
    ctx.emit("ops/pool.c.j2", kernel=ctx.kernel(kernel), parallel=None, planes=cexpr.literal(g.planes), fields=fields,
             count_include_pad=count_include_pad, run_time=run_time, x=ctx.ptr(node.inputs[0]), y=ctx.ptr(node.outputs[0]))


def _taps_inside(start: int, kernel: int, dilation: int, lo: int, hi: int) -> int:
    return sum(lo <= start + k * dilation < hi for k in range(kernel))


def _signed(extent) -> str:
    """An extent compared with the loops' ptrdiff_t indices: a number, or a run-time size converted."""
    return f"(ptrdiff_t)({extent.c()})" if is_variable(extent) else str(extent)


def _tap_offset(strides: list) -> str:
    """The tap's element within a plane from the indices i0, i1, ... (ptrdiff_t) and the plane's strides."""
    return " + ".join(f"i{i}" if cexpr.is_one(s) else f"i{i} * {_signed(s)}" for i, s in enumerate(strides))


def _window_dims(g, lead: int) -> list[dict]:
    """Per spatial dim of the loops: out, kernel, extent, `tap` (the input index of output o{i}'s tap k{i}, as C)
    and `in_padding` (whether some tap can fall outside the input, so the loop must test it)."""
    dims = []
    for i, d in enumerate(range(lead, KERNEL_DIMS)):
        stride, dilation, pad = g.stride[d], g.dilation[d], g.pad_begin[d]
        tap = " + ".join(t for t in (f"o{i}" if stride == 1 else f"o{i} * {stride}",
                                     f"k{i}" if dilation == 1 else f"k{i} * {dilation}"))
        tap += f" - {pad}" if pad else ""
        last = (g.out[d] - 1) * stride + (g.kernel[d] - 1) * dilation - pad
        dims.append(dict(out=_signed(g.out[d]), kernel=g.kernel[d], extent=_signed(g.inp[d]), tap=tap,
                         in_padding=bool(pad) or cexpr.bound(last - g.inp[d]) >= 0))  # at some size
    return dims


LOCAL_ROW_BYTES = 256  # the channels-last max loops keep a row of running maxima this small on the stack


def lower_pool_loops(node: Node, ctx, kind: str, *, count_include_pad: bool = False, p: int = 2,
                     storage_order: int = 0) -> None:
    """kind: "max" (with Indices when the node keeps a second output), "avg" or "lp" (p-norm of the window)."""
    x, y = node.inputs[0], node.outputs[0]
    g = geometry(node)
    lead = KERNEL_DIMS - (len(x.shape) - 2)
    ctype = ctx.c_type(x)
    floating = x.dtype.kind == "f"
    if kind != "max" and not floating:
        raise UnsupportedError(f"{node.op_type} on {x.dtype.name}", node.where())
    if is_channels_last(node):  # an 8-bit MaxPool in an int8 channels-last region (ops/max_pool)
        if kind != "max" or len(node.outputs) > 1:
            raise UnsupportedError(f"channels-last {node.op_type} loops without a kernel", node.where())
        dims = _window_dims(g, lead)
        offset = _tap_offset([g.inp[1] * g.inp[2], g.inp[2], 1][lead:])
        init = fill_literal(-np.inf if floating else np.iinfo(x.dtype).min, x.dtype)
        channels = x.shape[-1]
        local_row = isinstance(channels, int) and channels * x.dtype.itemsize <= LOCAL_ROW_BYTES
        ctx.emit("ops/pool_loops_nhwc.c.j2", batch=x.shape[0], channels=channels, local_row=local_row,
                 x_image=cexpr.offset(ctx.ptr(x), (cexpr.index("n", x.shape[0]), _product(g.inp) * channels)),
                 y_image=cexpr.offset(ctx.ptr(y), (cexpr.index("n", x.shape[0]), _product(g.out) * channels)), dims=dims,
                 offset=offset, ctype=ctype, init=init)
        return
    in_strides = [g.inp[1] * g.inp[2], g.inp[2], 1][lead:]
    spatial = g.inp[lead:]
    # Indices count within a plane in row-major order, or column-major (the first spatial dim fastest)
    index_strides = in_strides if storage_order == 0 else [_product(spatial[:i]) for i in range(len(spatial))]
    dims = _window_dims(g, lead)
    offset = _tap_offset(in_strides)
    suffix = "f" if x.dtype == np.float32 else ""
    indices = None
    if kind == "max":
        acc_type, init, result = ctype, fill_literal(-np.inf if floating else np.iinfo(x.dtype).min, x.dtype), "acc"
        if len(node.outputs) > 1:
            indices = ctx.ptr(node.outputs[1])
            at = _tap_offset(index_strides)
            fold = f"if (v > acc) {{ acc = v; at = {at}; }}"
        else:
            fold = "acc = v > acc ? v : acc;"
    elif kind == "avg":
        acc_type, init, fold = ctype, "0", "acc += v;"
        counts = []
        for i, d in enumerate(range(lead, KERNEL_DIMS)):
            lo, hi = (-g.pad_begin[d], g.inp[d] + g.pad_end[d]) if count_include_pad else (0, g.inp[d])
            table = [_taps_inside(o * g.stride[d] - g.pad_begin[d], g.kernel[d], g.dilation[d], lo, hi)
                     for o in range(g.out[d])]
            counts.append(f"{ctx.static_array(f'taps{i}', 'int32_t', table, f'spatial dim {i}: divisor per output')}[o{i}]")
        result = f"acc / ({ctype})({' * '.join(counts)})"
    else:
        acc_type, init = ctype, "0"
        if p == 1:
            fold, result = f"acc += fabs{suffix}(v);", "acc"
        elif p == 2:
            fold, result = "acc += v * v;", f"sqrt{suffix}(acc)"
        else:
            exponent = fill_literal(p, x.dtype)
            fold = f"acc += pow{suffix}(fabs{suffix}(v), {exponent});"
            result = f"pow{suffix}(acc, {fill_literal(1.0 / p, x.dtype)})"
    in_plane = _product(g.inp)
    out_plane = _product(g.out)
    ctx.emit("ops/pool_loops.c.j2", planes=g.planes, in_plane_signed=cexpr.text(in_plane),
             x_plane=cexpr.offset(ctx.ptr(x), ("p", in_plane)), y_plane=cexpr.offset(ctx.ptr(y), ("p", out_plane)),
             indices_plane=indices and cexpr.offset(indices, ("p", out_plane)),
             dims=dims, ctype=ctype, acc_type=acc_type, init=init, fold=fold, result=result, offset=offset,
             indices=indices)
