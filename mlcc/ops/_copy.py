"""Data movement as affine regions, shared by the shape ops (Transpose, Slice, Pad, Concat, Tile, ...).

A `Region` is a loop nest over `extents` writing dst[dst_offset + sum(i_k * dst_strides[k])] from either
src[src_offset + sum(i_k * src_strides[k])] (a copy) or a constant (a fill). Strides are in elements and
may be zero (broadcast) or negative (reversed slices, reflections). Everything is computed here, in
Python: `plan()` drops unit dims, merges dims that step contiguously in both tensors and turns an innermost
contiguous run into one memcpy/memset, so templates/ops/copy.c.j2 only prints. Ops work on element
counts and the element size, never on the element type's meaning, so every dtype moves the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import cnames
from ..cexpr import is_one, is_variable, is_zero, same, text
from ..errors import NeedsConstantError, ShapeError
from ..ir import Node, Value


def contiguous_strides(shape) -> list[int]:
    strides, step = [], 1
    for dim in reversed(tuple(shape)):
        strides.append(step)
        step *= dim if is_variable(dim) else int(dim)
    return strides[::-1]


@dataclass
class Region:
    extents: list[int]
    dst_strides: list[int]
    src_strides: list[int] | None = None  # None: a fill
    dst_offset: int = 0
    src_offset: int = 0

    @property
    def size(self) -> int:
        return math.prod(self.extents) if self.extents else 1


@dataclass
class Loops:
    """A planned region, ready to print: loops, then one statement using the loop counters i0, i1, ..."""
    extents: list[int]  # outer loops, outermost first
    dst: str  # element (dst[...]) or, for a run, the address it starts at
    src: str | None  # likewise; None for fills
    run_bytes: int  # > 0: the statement moves this many contiguous bytes (memcpy, or memset for a zero fill)
    comment: str = ""

    @property
    def is_run(self) -> bool:
        """A memcpy/memset of run_bytes (which may be a run-time size, 0 at some sizes), not one element."""
        return not is_zero(self.run_bytes)


def _coalesce(region: Region) -> tuple[list[int], list[int], list[int]]:
    copy = region.src_strides is not None
    src = region.src_strides if copy else [0] * len(region.extents)
    dims = [(e, d, s) for e, d, s in zip(region.extents, region.dst_strides, src) if not is_one(e)]
    merged: list[list[int]] = []
    for e, d, s in dims:
        if merged and same(merged[-1][1], d * e) and same(merged[-1][2], s * e):
            merged[-1] = [merged[-1][0] * e, d, s]  # the outer dim continues this one contiguously
        else:
            merged.append([e, d, s])
    return [m[0] for m in merged], [m[1] for m in merged], [m[2] for m in merged]


def _index(offset: int, strides: list[int], first_loop: int = 0) -> str:
    terms = [text(offset)] if not same(offset, 0) else []
    for k, s in enumerate(strides):
        var = f"i{first_loop + k}"
        if same(s, 0):
            continue
        if is_variable(s):  # a run-time stride: a product of sizes, never negative
            terms.append(f"+ {var} * {text(s)}" if terms else f"{var} * {text(s)}")
            continue
        term = var if abs(s) == 1 else f"{var} * {abs(s)}"
        if s < 0:
            terms.append(f"- {term}")
        else:
            terms.append(f"+ {term}" if terms else term)
    return " ".join(terms) or "0"


def _at(ident: str, index: str, run: bool) -> str:
    if run:
        return ident if index == "0" else f"{ident} + {index}"
    return f"{ident}[{index}]"


def plan(region: Region, dst: str, src: str | None, itemsize: int, fill_is_zero: bool = False,
         comment: str = "") -> Loops | None:
    """Loops for one region writing identifier `dst` from `src` (None for a fill); None when empty.
    A fill's innermost run is a memset only when the value's bytes are all zero (`fill_is_zero`)."""
    if is_zero(region.size):
        return None
    extents, dst_strides, src_strides = _coalesce(region)
    copy = region.src_strides is not None
    run = 1
    if extents and is_one(dst_strides[-1]) and (is_one(src_strides[-1]) if copy else fill_is_zero):
        run = extents.pop()  # coalesced extents are > 1 (or run-time sizes), so this is a real run
        dst_strides.pop()
        src_strides.pop()
    dst_at = _at(dst, _index(region.dst_offset, dst_strides), not is_one(run))
    src_at = _at(src, _index(region.src_offset, src_strides), not is_one(run)) if copy else None
    return Loops(extents, dst_at, src_at, run * itemsize if not is_one(run) else 0, comment)


def fill_literal(value, dtype: np.dtype) -> str:
    """A C literal holding `value` converted to `dtype` (float16 as its bit pattern)."""
    dtype = np.dtype(dtype)
    x = np.asarray(value).astype(dtype).reshape(-1)[0] if np.size(value) else dtype.type(0)
    if dtype == np.float16:
        return cnames.int_literal(int(np.asarray(x, np.float16).view(np.uint16)))
    if dtype == np.float64:
        text = repr(float(x))
        return cnames.float_literal(x) if not np.isfinite(x) else f"({text})" if text.startswith("-") else text
    if dtype.kind == "f":
        return cnames.float_literal(float(x))
    if dtype.kind in "ui":
        return f"{int(x)}u" if dtype.kind == "u" and int(x) >= 2**31 else cnames.int_literal(int(x))
    return "1" if bool(x) else "0"


def is_zero_bytes(value, dtype: np.dtype) -> bool:
    x = np.asarray(value).astype(dtype).reshape(-1)[:1]
    return not x.size or not any(x.tobytes())


def const_ints(node: Node, index: int, what: str) -> list[int] | None:
    """The integer values of optional input `index` (None when omitted); it must be a constant. Shape
    arithmetic that varies with the run-time sizes (mlcc/extents.py) gives its elements as cexpr.Sym."""
    value = node.input(index)
    if value is None:
        return None
    if value.variable_data is not None:
        return list(value.variable_data)
    if not value.is_const:
        raise NeedsConstantError(f"its {what} input {value.name!r} is computed at run time; mlcc needs it known at "
                                 "build time (a constant, or computed from shapes only)", node.where(), value.name)
    data = np.asarray(value.data).reshape(-1)
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        raise ShapeError(f"its {what} input {value.name!r} holds {data[~np.isfinite(data)][0]}; it must hold whole "
                         "numbers", node.where())
    return [int(x) for x in data]


def emit_regions(ctx, dst: Value, src: Value | None, regions: list[tuple[Region, str]],
                 fill: str = "", fill_is_zero: bool = False) -> None:
    """Render regions that all write `dst` (copies read `src`, fills write the literal `fill`)."""
    itemsize = np.dtype(dst.dtype).itemsize
    planned = [plan(r, ctx.ptr(dst), ctx.ptr(src) if src is not None and r.src_strides is not None else None,
                    itemsize, fill_is_zero, c) for r, c in regions if not is_zero(r.size)]  # naming a pointer marks it used
    # a tensor this moves nothing from or into may be declared yet never used: say so, or the compiler warns
    idle = [v for v in (dst if is_zero(dst.size) else None, None if planned else src) if v is not None and not v.is_const]
    idle = list(dict.fromkeys(ctx.ptr(v) for v in idle))
    ctx.emit("ops/copy.c.j2", regions=planned, fill=fill, idle=idle)


def emit_memcpy(ctx, dst: Value, src: Value) -> None:
    """The whole tensor, byte for byte (reshapes and identities)."""
    emit_regions(ctx, dst, src, [(Region([dst.size], [1], [1]), "")])


def transpose_region(shape, perm) -> Region:
    """out = transpose(in, perm), walking the output contiguously."""
    in_strides = contiguous_strides(shape)
    out_shape = [shape[p] if is_variable(shape[p]) else int(shape[p]) for p in perm]
    return Region(out_shape, contiguous_strides(out_shape), [in_strides[p] for p in perm])


def normalize_axis(axis: int, rank: int, node: Node) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}", node.where())
    return axis % rank if rank else 0


def slabs(shape, axis: int, sizes: list[int]) -> list[tuple[int, int, int, int]]:
    """(outer, size * inner, whole * inner, offset * inner) for consecutive pieces along `axis`."""
    outer = 1
    for d in shape[:axis]:
        outer *= d if is_variable(d) else int(d)
    inner = 1
    for d in shape[axis + 1:]:
        inner *= d if is_variable(d) else int(d)
    whole, offset, result = sum(sizes), 0, []
    for size in sizes:
        result.append((outer, size * inner, whole * inner, offset * inner))
        offset += size
    return result
