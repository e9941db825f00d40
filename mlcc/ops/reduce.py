"""The Reduce family (Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp): one table row each,
rendered by templates/ops/reduce_<form>.c.j2 (copy, fill, rows, columns: one template per form).

Each row says how an element becomes a term (|x|, x*x, exp(x - peak)), how terms fold into the accumulator,
and how the accumulator becomes the output (sqrt, log, the mean's division). The input's dims are split
into kept and reduced runs (size-1 dims dropped, neighbours of one kind merged). When the innermost run is
reduced, each output gets a register accumulator ("rows"); when it is kept, whole output rows accumulate
across the reduced dims so the innermost loop stays contiguous ("columns"). Float sums add blocks of at
most SUM_BLOCK terms into a partial before the running total, so a long reduction's rounding error grows
with SUM_BLOCK + count / SUM_BLOCK rather than with count (and infinities stay exact, unlike compensated
summation). Max and min start from the first element, as onnxruntime does. LogSumExp first finds each
output's peak and sums exp(x - peak), so large inputs do not overflow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import cexpr, cnames
from ..errors import NeedsConstantError, ShapeError, UnsupportedError
from ..ir import Node
from . import Op, Role, register_family
from ._copy import fill_literal

SUM_BLOCK = 256
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
NUMERIC = ("float32", "float64", *INTS)
FLOATS = ("float32", "float64")


class Math:
    """C spellings of the math a row needs, for one element type (ints go through double)."""

    def __init__(self, dtype: np.dtype, ctype: str):
        self.ctype, self.kind = ctype, dtype.kind
        self.suffix = "f" if ctype == "float" else ""

    def call(self, fn: str, e: str) -> str:
        if self.kind == "f":
            return f"{fn}{self.suffix}({e})"
        return f"({self.ctype}){fn}((double)({e}))"

    def abs(self, e: str) -> str:
        if self.kind == "u":
            return e
        return self.call("fabs", e) if self.kind == "f" else f"({e} < 0 ? -{e} : {e})"


@dataclass(frozen=True)
class Row:
    update: str  # C statement folding `v` into `{acc}`
    init: str | None  # the accumulator's start; None: the first element (max, min)
    empty: float  # the output of a reduction over no elements (±inf: the type's extreme for ints)
    term: Callable[[Math, str], str] = lambda m, e: e  # the term of element e (may read `peak`)
    finish: Callable[[Math, str, str], str] = lambda m, acc, count: acc  # output from acc and the count
    additive: bool = False  # terms are summed: float sums are blocked
    peak: bool = False  # a first pass finds each output's maximum, subtracted before exp
    single_is_identity: bool = True  # a reduction of one element gives that element
    dtypes: tuple[str, ...] = NUMERIC
    axes_input_since: int = 18  # from this opset `axes` is an input, not an attribute


def _sum(**kw) -> Row:
    kw.setdefault("empty", 0.0)
    return Row("{acc} += v;", "0", additive=True, **kw)


TABLE: dict[str, Row] = {
    "ReduceSum": _sum(axes_input_since=13),
    "ReduceMean": _sum(finish=lambda m, acc, count: f"{acc} / {count}"),
    "ReduceMax": Row("{acc} = v > {acc} ? v : {acc};", None, float("-inf"), dtypes=(*NUMERIC, "bool")),
    "ReduceMin": Row("{acc} = v < {acc} ? v : {acc};", None, float("inf"), dtypes=(*NUMERIC, "bool")),
    "ReduceProd": Row("{acc} *= v;", "1", 1.0),
    "ReduceL1": _sum(term=lambda m, e: m.abs(e), single_is_identity=False),
    "ReduceL2": _sum(term=lambda m, e: f"{e} * {e}", finish=lambda m, acc, count: m.call("sqrt", acc),
                     single_is_identity=False),
    "ReduceSumSquare": _sum(term=lambda m, e: f"{e} * {e}", single_is_identity=False),
    "ReduceLogSum": _sum(finish=lambda m, acc, count: m.call("log", acc), empty=float("-inf"),
                         single_is_identity=False),
    "ReduceLogSumExp": _sum(term=lambda m, e: m.call("exp", f"{e} - peak"),
                            finish=lambda m, acc, count: f"peak + {m.call('log', acc)}", empty=float("-inf"),
                            peak=True, dtypes=FLOATS),
}

MAX_UPDATE = TABLE["ReduceMax"].update
# what passes recognising formulas see in these ops (mlcc.ops.Role)
ROLES = {"ReduceSum": Role.REDUCE_SUM, "ReduceMean": Role.REDUCE_MEAN, "ReduceMax": Role.REDUCE_MAX}


@dataclass
class Loop:
    var: str
    extent: int


def reduced_axes(node: Node, row: Row) -> list[int] | None:
    """Sorted non-negative axes to reduce; None means none (noop_with_empty_axes on empty axes)."""
    rank = len(node.inputs[0].shape)
    if node.opset >= row.axes_input_since:
        given = node.input(1)
        if given is not None and not given.is_const:
            raise NeedsConstantError(f"its axes input {given.name!r} is computed at run time; mlcc needs it known "
                                     "at build time (a constant, or computed from shapes only)", node.where(), given.name)
        axes = [] if given is None else [int(a) for a in given.data.reshape(-1)]
    else:
        axes = list(node.attrs.get("axes") or [])
    if not axes:
        return None if node.attrs.get("noop_with_empty_axes", 0) else list(range(rank))
    normal = sorted({a + rank if a < 0 else a for a in axes})
    if len(normal) != len(axes) or any(not 0 <= a < rank for a in normal):
        raise ShapeError(f"axes {axes} are invalid for rank {rank}", node.where())
    return normal


def _runs(shape: tuple[int, ...], axes: set[int]) -> list[tuple[int, bool, int]]:
    """(extent, reduced, input stride) per run of same-kind dims, outermost first, size-1 dims dropped."""
    runs: list[list] = []
    for d, extent in enumerate(shape):
        if cexpr.is_one(extent):  # a run-time extent stays: its loop runs once at size 1
            continue
        if runs and runs[-1][1] == (d in axes):
            runs[-1][0] *= extent
        else:
            runs.append([extent, d in axes])
    stride, out = 1, []
    for extent, reduced in reversed(runs):
        out.append((extent, reduced, stride))
        stride *= extent
    return out[::-1]


def _product(extents) -> int:
    out = 1
    for e in extents:
        out = out * e
    return out


def _index(terms: list[tuple[str, int]]) -> str:
    return cexpr.offset(None, *terms) or "0"


def _offset(ptr: str, index: str) -> str:
    return ptr if index == "0" else f"{ptr} + {index}"


def _empty_literal(row: Row, dtype: np.dtype) -> str:
    value = row.empty
    if dtype.kind in "iub" and np.isinf(value):  # max/min of nothing: the type's extreme
        if dtype.kind == "b":
            value = value > 0
        else:
            info = np.iinfo(dtype)
            value = info.max if value > 0 else info.min
    return fill_literal(value, dtype)


def _load(ctype: str, term: str, element: str) -> str:
    """Statements defining `v`, the term of one element."""
    if term == "e":
        return f"const {ctype} v = {element};"
    return f"const {ctype} e = {element};\nconst {ctype} v = {term};"


def _make(op_type: str, row: Row) -> type[Op]:
    class ReduceOp(Op):
        attrs = {"axes": None, "keepdims": 1, "noop_with_empty_axes": 0}
        role = ROLES.get(op_type)
        variable_extents = True  # loops over run-time extents; a mean divides by the run's count

        def infer(self, node: Node):
            x = node.inputs[0]
            axes = reduced_axes(node, row)
            if axes is None:
                return [(x.dtype, x.shape)]
            keep = node.attrs["keepdims"]
            shape = [1 if d in axes else n for d, n in enumerate(x.shape) if keep or d not in axes]
            return [(x.dtype, tuple(shape))]

        def flops(self, node: Node) -> int:
            return node.inputs[0].size

        @staticmethod
        def scratch_rows(ctx, rows: bool, blocked: bool, inner, dtype: np.dtype) -> dict[str, str]:
            """The columns form's scratch rows: the peaks (LogSumExp), then a block's partial sums (sized for
            the largest row; a run-time one starts its partial sums where its peaks end)."""
            count = 0 if rows else int(row.peak) + int(blocked)
            work = ctx.scratch(count * cexpr.bound(inner) * dtype.itemsize, "rows", dtype) if count else ""
            return dict(peak_buf=work, part_buf=cexpr.offset(work, ("1", inner)) if row.peak else work)

        def lower(self, node: Node, ctx) -> None:
            x, y = node.inputs[0], node.outputs[0]
            if x.dtype.name not in row.dtypes:
                raise UnsupportedError(f"{op_type} on {x.dtype.name} is not supported yet", node.where())
            axes = reduced_axes(node, row)
            ctype = ctx.c_type(x)
            if axes is None and row.single_is_identity:
                ctx.emit("ops/reduce_copy.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), nbytes=x.nbytes)
                return
            if y.size == 0:
                return
            common = dict(ctype=ctype, y=ctx.ptr(y), count=y.size)
            axes_set = set(range(len(x.shape))) if axes is None else set(axes)
            count = _product(x.shape[d] for d in axes_set)  # terms per output
            if not cexpr.is_variable(count) and count == 0:  # reducing over an empty dim
                ctx.emit("ops/reduce_fill.c.j2", empty=_empty_literal(row, x.dtype), **common)
                return
            runs = _runs(x.shape, set(axes or []))
            if not any(reduced for _, reduced, _ in runs):
                runs.append((1, True, 0))  # only size-1 dims are reduced: one term per output
            is_float = x.dtype.kind == "f"
            math = Math(x.dtype, ctype)
            count_literal = (f"({ctype}){cexpr.text(count)}" if cexpr.is_variable(count) else
                             cnames.float_literal(count) if ctype == "float" else
                             f"{count}.0" if is_float else cnames.int_literal(count))
            kept_runs = [(e, s) for e, reduced, s in runs if not reduced]
            red_runs = [(e, s) for e, reduced, s in runs if reduced]
            rows = runs[-1][1]
            inner = 1 if rows else kept_runs.pop()[0]
            kept = [Loop(f"k{i}", e) for i, (e, _) in enumerate(kept_runs)]
            out_strides, step = [], inner
            for e, _ in reversed(kept_runs):
                out_strides.append(step)
                step *= e
            red = [Loop(f"r{i}", e) for i, (e, _) in enumerate(red_runs)]
            # blocked float sums: the innermost reduced loop is cut into blocks of SUM_BLOCK terms
            # (decided for the largest count: right at every size)
            blocked = row.additive and is_float and cexpr.bound(count) > SUM_BLOCK
            chunk = SUM_BLOCK if blocked and cexpr.bound(red[-1].extent) > SUM_BLOCK else 0
            in_red = _index([(r.var, s) for r, (_, s) in zip(red, red_runs)])
            term = row.term(math, "e")
            finish = row.finish(math, "acc", count_literal)
            finish_row = row.finish(math, "acc[i]", count_literal).replace("peak", "peak[i]")
            values = dict(
                kept=kept, red=red, inner=inner, blocked=blocked, chunk=chunk,
                src=_offset(ctx.ptr(x), _index([(k.var, s) for k, (_, s) in zip(kept, kept_runs)])),
                out_index=_index([(k.var, s) for k, s in zip(kept, reversed(out_strides))]),
                out_row=_offset(ctx.ptr(y), _index([(k.var, s) for k, s in zip(kept, reversed(out_strides))])),
                load=_load(ctype, term, f"src[{in_red}]"), load_row=_load(ctype, term.replace("peak", "peak[i]"), "s[i]"),
                load_plain=_load(ctype, "e", f"src[{in_red}]"), load_plain_row=_load(ctype, "e", "s[i]"), in_red=in_red,
                update=row.update.format(acc="acc"), update_part=row.update.format(acc="part"),
                update_row=row.update.format(acc="acc[i]"), update_part_row=row.update.format(acc="part[i]"),
                update_peak=MAX_UPDATE.format(acc="peak"), update_peak_row=MAX_UPDATE.format(acc="peak[i]"),
                init=row.init, peak=row.peak, finish=finish, finish_row=finish_row,
                **self.scratch_rows(ctx, rows, blocked, inner, x.dtype),
                **common)
            ctx.emit("ops/reduce_rows.c.j2" if rows else "ops/reduce_columns.c.j2", **values)

    ReduceOp.op_type = op_type
    ReduceOp.__name__ = ReduceOp.__qualname__ = op_type
    return ReduceOp


register_family(_make, TABLE)
