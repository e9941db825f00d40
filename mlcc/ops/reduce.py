"""ReduceSum, ReduceMean, ReduceMax, ReduceMin: one table row each, rendered by templates/ops/reduce.c.j2.

The input's dims are split into kept and reduced runs (size-1 dims dropped, neighbours of one kind merged).
When the innermost run is reduced, each output gets a register accumulator ("rows"); when it is kept, whole
output rows accumulate across the reduced dims so the innermost loop stays contiguous ("columns"). Float
sums add blocks of at most SUM_BLOCK terms into a partial before the running total, so a long reduction's
rounding error grows with SUM_BLOCK + count / SUM_BLOCK rather than with count (and infinities stay exact,
unlike compensated summation). Max and min start from the first element, as onnxruntime does.
"""

from __future__ import annotations

from dataclasses import dataclass


from .. import cnames
from ..errors import NeedsConstantError, ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register_family

SUM_BLOCK = 256
NUMERIC = ("float32", "float64", "int32", "int64")


@dataclass(frozen=True)
class Row:
    update: str  # C statement folding `v` into `{acc}`
    sums: bool  # accumulator starts at 0 (else at the first element)
    mean: bool = False
    axes_input_since: int = 18  # from this opset `axes` is an input, not an attribute


TABLE: dict[str, Row] = {
    "ReduceSum": Row("{acc} += v;", sums=True, axes_input_since=13),
    "ReduceMean": Row("{acc} += v;", sums=True, mean=True),
    "ReduceMax": Row("{acc} = v > {acc} ? v : {acc};", sums=False),
    "ReduceMin": Row("{acc} = v < {acc} ? v : {acc};", sums=False),
}


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
        if extent == 1:
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


def _index(terms: list[tuple[str, int]]) -> str:
    return " + ".join(var if s == 1 else f"{var} * {s}u" for var, s in terms) or "0"


def _offset(ptr: str, index: str) -> str:
    return ptr if index == "0" else f"{ptr} + {index}"


def _make(op_type: str, row: Row) -> type[Op]:
    class ReduceOp(Op):
        attrs = {"axes": None, "keepdims": 1, "noop_with_empty_axes": 0}

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

        def lower(self, node: Node, ctx) -> None:
            x, y = node.inputs[0], node.outputs[0]
            if x.dtype.name not in NUMERIC:
                raise UnsupportedError(f"{op_type} on {x.dtype.name} is not supported yet", node.where())
            axes = reduced_axes(node, row)
            ctype = ctx.c_type(x)
            common = dict(ctype=ctype, x=ctx.ptr(x), y=ctx.ptr(y), count=y.size)
            if axes is None:
                ctx.emit("ops/reduce.c.j2", form="copy", nbytes=x.nbytes, **common)
                return
            if y.size == 0:
                return
            count = x.size // y.size if y.size else 0
            if count == 0:  # reducing over an empty dim: the identity (0 for sums, as onnxruntime)
                ctx.emit("ops/reduce.c.j2", form="fill", **common)
                return
            runs = _runs(x.shape, set(axes))
            if not any(reduced for _, reduced, _ in runs):
                runs.append((1, True, 0))  # only size-1 dims are reduced: one term per output
            is_float = x.dtype.kind == "f"
            finish = "acc"
            if row.mean:
                finish = f"acc / {cnames.float_literal(count) if is_float else cnames.int_literal(count)}"
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
            blocked = row.sums and is_float and count > SUM_BLOCK
            chunk = SUM_BLOCK if blocked and red[-1].extent > SUM_BLOCK else 0
            values = dict(
                form="rows" if rows else "columns", kept=kept, red=red, inner=inner, blocked=blocked, chunk=chunk,
                src=_offset(ctx.ptr(x), _index([(k.var, s) for k, (_, s) in zip(kept, kept_runs)])),
                in_red=_index([(r.var, s) for r, (_, s) in zip(red, red_runs)]),
                out_index=_index([(k.var, s) for k, s in zip(kept, reversed(out_strides))]),
                out_row=_offset(ctx.ptr(y), _index([(k.var, s) for k, s in zip(kept, reversed(out_strides))])),
                update=row.update.format(acc="acc"), update_part=row.update.format(acc="part"),
                update_row=row.update.format(acc="acc[i]"), update_part_row=row.update.format(acc="part[i]"),
                sums=row.sums, finish=finish, finish_row=finish.replace("acc", "acc[i]"),
                part=ctx.scratch(inner * x.dtype.itemsize, "partial", x.dtype) if blocked and not rows else "",
                **common)
            ctx.emit("ops/reduce.c.j2", **values)

    ReduceOp.op_type = op_type
    ReduceOp.__name__ = ReduceOp.__qualname__ = op_type
    return ReduceOp


register_family(_make, TABLE)
