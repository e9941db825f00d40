"""Shared by the indexing ops (GatherElements, ScatterElements, GatherND, ScatterND, TensorScatter, ...).

`Nest` is a loop nest over a tensor's shape (unit dims get no loop) whose counters i0, i1, ... index any
tensor by an affine expression: `nest.index(strides)` prints it. Indices read at run time are wrapped
(negative counts from the end) and clamped to the axis by templates/ops/index.c.j2's `read_index`, so an
invalid index never reaches outside a buffer. Reductions are the ONNX scatter ones, as C assignments.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cnames
from ..cexpr import is_one, is_variable, same, text
from ..errors import UnsupportedError
from ..ir import Node, Value
from ._copy import contiguous_strides


@dataclass
class Nest:
    extents: list[int]  # trip counts, outermost first
    dims: list[int]  # the shape axis each loop walks

    @classmethod
    def over(cls, shape) -> "Nest":
        dims = [d for d, e in enumerate(shape) if not is_one(e)]  # a run-time extent keeps its loop
        return cls([shape[d] if is_variable(shape[d]) else int(shape[d]) for d in dims], dims)

    def index(self, strides, skip: int | None = None) -> str:
        """sum(i_k * strides[axis walked by loop k]), leaving out axis `skip`."""
        terms = []
        for k, d in enumerate(self.dims):
            s = strides[d] if is_variable(strides[d]) else int(strides[d])
            if d != skip and not same(s, 0):
                terms.append(f"i{k}" if is_one(s) else f"i{k} * {text(s)}")
        return add(*terms)

    def counter(self, axis: int) -> str:
        """The C expression of the counter walking `axis` (0 when that axis has one element)."""
        return f"i{self.dims.index(axis)}" if axis in self.dims else "0"


def add(*terms: str) -> str:
    """A C sum of index terms, leaving out zeros."""
    return " + ".join(t for t in terms if t and t != "0") or "0"


def scaled(index: str, stride: int) -> str:
    """`index` (a C int64 index) times `stride`, as a size_t term."""
    return f"(size_t){index}" if is_one(stride) else f"(size_t){index} * {text(stride)}"


def strides(value: Value) -> list[int]:
    return contiguous_strides(value.shape)


# reduction attribute -> assignment of `{d}` (the destination element) from `{u}` (the update)
REDUCTIONS = {
    "none": "{d} = {u};",
    "add": "{d} += {u};",
    "mul": "{d} *= {u};",
    "max": "if ({u} > {d}) {d} = {u};",
    "min": "if ({u} < {d}) {d} = {u};",
}


def reduction(node: Node, dst: str, update: str) -> str:
    """The C statement combining `update` into `dst` per the node's `reduction` attribute."""
    name = node.attrs.get("reduction", "none")
    if name not in REDUCTIONS:
        raise UnsupportedError(f"reduction {name!r}", node.where())
    if name != "none" and node.outputs[0].dtype == np.float16:  # stored as raw bits: C arithmetic is wrong
        raise UnsupportedError(f"reduction {name!r} on float16", node.where())
    if name != "none" and node.outputs[0].dtype == np.bool_:
        raise UnsupportedError(f"reduction {name!r} on bool", node.where())
    return REDUCTIONS[name].format(d=dst, u=update)


def emit_idle(ctx, values: list[Value | None]) -> None:
    """Nothing to compute (an empty output): mention the run-time pointers so the compiler does not warn."""
    idle = list(dict.fromkeys(ctx.ptr(v) for v in values if v is not None and not v.is_const))
    ctx.emit("ops/copy.c.j2", regions=[], fill="", idle=idle)


def emit_indexed(ctx, nest: Nest, reads: list[tuple[str, str, int]], statement: str, inner: int = 0) -> None:
    """Render templates/ops/indexed.c.j2: per iteration of `nest`, read each (name, C expression, axis length)
    index, wrapped and clamped, then run `statement` (`inner` times over e when inner > 0)."""
    ctx.emit("ops/indexed.c.j2", extents=nest.extents, reads=[(n, e, _int64(d), _int64(d - 1)) for n, e, d in reads],
             statement=statement, inner=inner)


def _int64(value) -> str:
    """An index bound as int64_t C: a literal, or a run-time size converted."""
    return f"(int64_t)({value.c()})" if is_variable(value) else cnames.int_literal(value)
