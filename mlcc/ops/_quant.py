"""Shared by the quantization ops: integer ranges, and where a scale or zero point applies to an element.

QuantizeLinear/DequantizeLinear take a scale (and zero point) per tensor, per slice along `axis`, or per
block of `block_size` consecutive elements along `axis` (the parameter has x's shape with that dim divided,
rounded up). `param_regions` turns that into loop nests over x, each giving x's and the parameter's index
expressions, so templates/ops/quantize.c.j2 only prints. A last partial block gets a region of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from ._copy import contiguous_strides, normalize_axis

# integer type -> (lowest, highest) a quantized value saturates to
RANGES = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
          for t in ("int8", "uint8", "int16", "uint16", "int32")}


def quant_range(dtype: np.dtype, node: Node) -> tuple[int, int]:
    if np.dtype(dtype) not in RANGES:
        raise UnsupportedError(f"{node.op_type} to or from {np.dtype(dtype).name} is not supported "
                               "(int8, uint8, int16, uint16, int32)", node.where())
    return RANGES[np.dtype(dtype)]


@dataclass
class Nest:
    """Loops (counters i0, i1, ...) and, per operand, x's first, its index expression and how many of the
    outermost loops it depends on (an operand the inner loops do not move is read once, outside them)."""
    extents: list[int]
    index: list[str]
    depth: list[int]


def _index(offset: int, strides: list[int]) -> str:
    terms = [f"i{d}" if s == 1 else f"i{d} * {s}" for d, s in enumerate(strides) if s]
    if offset:
        terms.insert(0, str(offset))
    return " + ".join(terms) or "0"


def affine_nest(extents: list[int], strides: list[list[int]], offsets: list[int]) -> Nest:
    """Loops over `extents` where operand k reads offsets[k] + sum(i_d * strides[k][d]); unit dims are
    dropped and dims every operand walks contiguously are merged."""
    dims = [d for d, e in enumerate(extents) if e != 1]
    ext = [extents[d] for d in dims]
    per = [[s[d] for d in dims] for s in strides]
    k = len(ext) - 1
    while k > 0:
        if all(p[k - 1] == p[k] * ext[k] for p in per):
            ext[k - 1] *= ext[k]
            for p in per:
                p[k - 1] = p[k]
                del p[k]
            del ext[k]
        k -= 1
    depth = [max((d + 1 for d, stride in enumerate(p) if stride), default=0) for p in per]
    return Nest(ext, [_index(o, p) for o, p in zip(offsets, per)], depth)


OUTPUT_PERM = "output_perm"  # passes/choose_layout's mark: the output is stored transposed by this perm


def param_regions(node: Node, x: Value, param: Value, axis: int, block_size: int) -> list[Nest]:
    """Nests over x reading x (index 0) and the scale or zero point `param` (index 1); with the node's
    OUTPUT_PERM (QuantizeLinear.write_transposed, per tensor), nests over the output it writes transposed (index 2)."""
    shape = [int(d) for d in x.shape]
    perm = node.attrs.get(OUTPUT_PERM)
    if perm is not None:  # walk y contiguously
        dims = [shape[p] for p in perm]
        x_strides = contiguous_strides(shape)
        return [affine_nest(dims, [[x_strides[p] for p in perm], [0] * len(dims), contiguous_strides(dims)], [0, 0, 0])]
    if param.size == 1:  # per tensor
        dims = shape or [1]
        return [affine_nest(dims, [contiguous_strides(dims), [0] * len(dims)], [0, 0])]
    rank = len(shape)
    axis = normalize_axis(axis, rank, node)
    outer, dim, inner = int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:]))
    if block_size <= 0:
        if len(param.shape) != 1 or param.size != dim:
            raise UnsupportedError(f"{param.type_str()} does not match axis {axis} of {x.type_str()}", node.where())
        return [affine_nest([outer, dim, inner], [[dim * inner, inner, 1], [0, 1, 0]], [0, 0])]
    blocks = -(-dim // block_size)
    expected = (*shape[:axis], blocks, *shape[axis + 1:])
    if tuple(param.shape) != expected:
        raise UnsupportedError(f"{param.type_str()} does not block {x.type_str()} by {block_size} along axis {axis}",
                               node.where())
    # x viewed as [outer, block, offset in block, inner]; the parameter as [outer, block, inner]
    full, rest = dim // block_size, dim % block_size
    x_strides = [dim * inner, block_size * inner, inner, 1]
    p_strides = [blocks * inner, inner, 0, 1]
    nests = []
    if full:
        nests.append(affine_nest([outer, full, block_size, inner], [x_strides, p_strides], [0, 0]))
    if rest:
        nests.append(affine_nest([outer, 1, rest, inner], [x_strides, p_strides], [full * block_size * inner, full * inner]))
    return nests


def broadcast_param(param: np.ndarray, x_shape: tuple[int, ...], axis: int, block_size: int) -> np.ndarray:
    """A per-tensor, per-axis or per-block scale or zero point shaped to broadcast against x (numpy)."""
    param = np.asarray(param)
    if param.size == 1:
        return param.reshape(())
    axis = axis % len(x_shape)
    if block_size > 0:  # repeat each block's value along the axis, cut to x's extent
        return np.repeat(param, block_size, axis=axis).take(range(x_shape[axis]), axis=axis)
    return param.reshape([-1 if d == axis else 1 for d in range(len(x_shape))])


def quant_axis(node: Node) -> tuple[int, int]:
    """(axis, block_size) from the attributes; blocks exist from opset 21."""
    block_size = int(node.attrs.get("block_size", 0) or 0)
    return int(node.attrs.get("axis", 1)), block_size


def scalar_or(node: Node, value: Value | None, count: int, counter: str, ctx, what: str) -> str | None:
    """C for the element of a per-tensor or per-`count` parameter the loop counter `counter` selects."""
    if value is None:
        return None
    if value.size == 1:
        return f"{ctx.ptr(value)}[0]"
    if len(value.shape) == 1 and value.size == count:
        return f"{ctx.ptr(value)}[{counter}]"
    raise UnsupportedError(f"{what} {value.type_str()} is neither per tensor nor of {count} entries", node.where())


def requantize(node: Node, ctx, acc: str, multiplier: str, zero: str | None, out: Value) -> str:
    """C storing int32 `acc` rescaled by the float `multiplier`, plus `zero`, rounded half to even and
    saturated to `out`'s type: in double, as the ONNX reference does."""
    lo, hi = quant_range(out.dtype, node)
    value = f"(double){acc} * (double)({multiplier})" + (f" + (double){zero}" if zero else "")
    return f"({ctx.c_type(out)})fmin(fmax(rint({value}), {float(lo)!r}), {float(hi)!r})"


@dataclass
class QMatMul:
    a: Value
    b: Value
    y: Value
    a_zero: Value | None = None
    b_zero: Value | None = None
    a_scale: Value | None = None  # the scales and y_zero: QLinearMatMul only
    b_scale: Value | None = None
    y_scale: Value | None = None
    y_zero: Value | None = None


def emit_qmatmul(node: Node, ctx, q: QMatMul) -> None:
    from ._broadcast import loop_nest

    a, b, y = q.a, q.b, q.y
    for v in (a, b):
        if v.dtype not in (np.int8, np.uint8):
            raise UnsupportedError(f"{node.op_type} of {v.type_str()} (int8 and uint8 only)", node.where())
    for v in (q.a_scale, q.b_scale, q.y_scale):
        if v is not None and v.dtype != np.float32:
            raise UnsupportedError(f"{node.op_type} with {v.type_str()} scales (float32 only)", node.where())
    # as numpy.matmul: a vector A is one row (its dim dropped from Y), a vector B one column
    a_shape = (1, *a.shape) if len(a.shape) == 1 else tuple(a.shape)
    b_shape = (*b.shape, 1) if len(b.shape) == 1 else tuple(b.shape)
    (m, k), (kb, n) = a_shape[-2:], b_shape[-2:]
    try:
        batch = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2]))
    except ValueError:
        raise UnsupportedError(f"batch dims of {a.type_str()} and {b.type_str()} do not broadcast", node.where()) from None
    y_shape = (*batch, *((m,) if len(a.shape) > 1 else ()), *((n,) if len(b.shape) > 1 else ()))
    if k != kb or tuple(y.shape) != y_shape:
        raise UnsupportedError(f"{node.op_type} of {a.type_str()} x {b.type_str()} -> {y.type_str()}", node.where())
    nest = loop_nest(batch, [a_shape[:-2], b_shape[:-2]])
    store = "acc"
    if q.y_scale is not None:
        if q.y_scale.size != 1 or (q.y_zero is not None and q.y_zero.size != 1):
            raise UnsupportedError(f"{node.op_type}: y_scale and y_zero_point must be per tensor", node.where())
        multiplier = (f"{scalar_or(node, q.a_scale, m, 'r', ctx, 'a_scale')} * "
                      f"{scalar_or(node, q.b_scale, n, 'c', ctx, 'b_scale')} / {ctx.ptr(q.y_scale)}[0]")
        store = requantize(node, ctx, "acc", multiplier, scalar_or(node, q.y_zero, 1, "0", ctx, "y_zero_point"), y)
    ctx.emit("ops/qmatmul.c.j2", nest=nest, m=m, n=n, k=k, a=ctx.ptr(a), b=ctx.ptr(b), y=ctx.ptr(y),
             a_type=ctx.c_type(a), b_type=ctx.c_type(b), y_type=ctx.c_type(y), a_size=m * k, b_size=k * n, y_size=m * n,
             a_zero=scalar_or(node, q.a_zero, m, "r", ctx, "a_zero_point"),
             b_zero=scalar_or(node, q.b_zero, n, "c", ctx, "b_zero_point"), store=store)


@dataclass
class QConv:
    x: Value
    w: Value
    y: Value
    x_zero: Value | None = None
    w_zero: Value | None = None
    bias: Value | None = None  # the bias and the scales: QLinearConv only
    x_scale: Value | None = None
    w_scale: Value | None = None
    y_scale: Value | None = None
    y_zero: Value | None = None


def emit_qconv(node: Node, ctx, q: QConv) -> None:
    """A direct convolution of 8-bit X and W accumulated in int32 (templates/ops/qconv.c.j2); taps in the
    padding are skipped, as if the padding held the zero point."""
    from ._conv import CONV_ATTRS, conv_geometry

    x, w, y = q.x, q.w, q.y
    for v in (x, w):
        if v.dtype not in (np.int8, np.uint8):
            raise UnsupportedError(f"{node.op_type} of {v.type_str()} (int8 and uint8 only)", node.where())
    for v in (q.x_scale, q.w_scale, q.y_scale):
        if v is not None and v.dtype != np.float32:
            raise UnsupportedError(f"{node.op_type} with {v.type_str()} scales (float32 only)", node.where())
    # the geometry depends on shapes and attributes only: ask Conv's, on float stand-ins of X and W
    stand_ins = [Value(v.name, np.dtype(np.float32), v.shape) for v in (x, w)]
    attrs = {name: node.attrs.get(name, default) for name, default in CONV_ATTRS.items()}
    geo = conv_geometry(Node(node.op_type, node.name, stand_ins, [], attrs, node.domain, node.opset))
    groups = int(attrs["group"])
    fields = dict(geo.fields())
    out_channels = w.shape[0]
    if tuple(y.shape) != (x.shape[0], out_channels, *geo.out):
        raise UnsupportedError(f"{node.op_type} output {y.type_str()} disagrees with its geometry", node.where())
    store = "acc"
    if q.y_scale is not None:
        if any(v is not None and v.size != 1 for v in (q.x_scale, q.y_scale, q.x_zero, q.y_zero)):
            raise UnsupportedError(f"{node.op_type}: x and y scales and zero points must be per tensor", node.where())
        multiplier = f"{ctx.ptr(q.x_scale)}[0] * {scalar_or(node, q.w_scale, out_channels, 'oc', ctx, 'w_scale')} / {ctx.ptr(q.y_scale)}[0]"
        store = requantize(node, ctx, "acc", multiplier, scalar_or(node, q.y_zero, 1, "0", ctx, "y_zero_point"), y)
    if q.bias is not None and (q.bias.dtype != np.int32 or q.bias.size != out_channels):
        raise UnsupportedError(f"{node.op_type} bias {q.bias.type_str()} (int32, one per output channel)", node.where())
    ctx.emit("ops/qconv.c.j2", x=ctx.ptr(x), w=ctx.ptr(w), y=ctx.ptr(y), x_type=ctx.c_type(x), w_type=ctx.c_type(w),
             y_type=ctx.c_type(y), batch=x.shape[0], groups=groups, group_in=x.shape[1] // groups,
             group_out=out_channels // groups, in_channels=x.shape[1], out_channels=out_channels,
             w_channel=x.shape[1] // groups * geo.taps, in_size=geo.in_size, out_size=geo.out_size, taps=geo.taps, **fields,
             x_zero=scalar_or(node, q.x_zero, 1, "0", ctx, "x_zero_point"),
             w_zero=scalar_or(node, q.w_zero, out_channels, "oc", ctx, "w_zero_point"),
             bias=f"{ctx.ptr(q.bias)}[oc]" if q.bias is not None else "0", store=store)


class PerTensorChannelsLast:
    """The channels-last capability (passes/choose_layout) of QuantizeLinear / DequantizeLinear: with one scale
    and zero point for the whole tensor they compute each element alone, so a region of integer convolutions
    runs through the Q -> float op -> DQ between them without a transpose. A mixin listed before Op."""

    def activation_inputs(self, node: Node) -> list[int]:
        return [0]

    def runs_channels_last(self, node: Node) -> bool:
        x, scale, zero = node.inputs[0], node.inputs[1], node.input(2)
        return (len(x.shape) == 4 and not x.is_const and scale.size == 1 and (zero is None or zero.size == 1)
                and not int(node.attrs.get("block_size", 0) or 0))
