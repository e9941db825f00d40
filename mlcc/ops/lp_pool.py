"""LpPool: y = (sum over each window of |x|^p)^(1/p), with the window geometry of MaxPool/AveragePool
(strides, pads, auto_pad, dilations and ceil_mode from opset 18); taps in the padding add nothing. p is a
float before opset 2, then an int. Rendered by templates/ops/lp_pool.c.j2, one loop per spatial dim.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cnames
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._pool import POOL_ATTRS, PoolGeometry, geometry, pool_types

DTYPES = ("float32", "float64")


@dataclass
class Dim:
    """One spatial dim's loops: output counter o (None when there is one output), tap counter k, input
    position i = at; inside: every tap lands in the input, so none needs a check."""
    o: str | None
    k: str
    i: str
    inp: int
    out: int
    kernel: int
    at: str
    inside: bool


def _dim(name: str, g: PoolGeometry, d: int) -> Dim:
    o = f"o{name}" if g.out[d] > 1 else None
    k = f"k{name}"
    terms = [k if g.dilation[d] == 1 else f"{k} * {g.dilation[d]}"]
    if o:
        terms.insert(0, o if g.stride[d] == 1 else f"{o} * {g.stride[d]}")
    at = " + ".join(terms) + (f" - {g.pad_begin[d]}" if g.pad_begin[d] else "")
    last = (g.out[d] - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] - g.pad_begin[d]
    return Dim(o, k, f"i{name}", g.inp[d], g.out[d], g.kernel[d], at, g.pad_begin[d] == 0 and last < g.inp[d])


def _math(ctype: str, p: float) -> tuple[str, str]:
    """C expressions: the term of element `v`, and the output from the sum `acc`."""
    f = "f" if ctype == "float" else ""
    if p == 1:
        return f"fabs{f}(v)", "acc"
    if p == 2:
        return "v * v", f"sqrt{f}(acc)"
    literal = cnames.float_literal if ctype == "float" else repr
    return (f"pow{f}(fabs{f}(v), {literal(float(p))})", f"pow{f}(acc, {literal(1.0 / p)})")


def _index(counters: list[str], extents: list[int]) -> str:
    """Row-major index of counters over extents, e.g. (a * 4 + b) * 5 + c."""
    text = counters[0]
    for counter, extent in zip(counters[1:], extents[1:]):
        text = f"({text}) * {extent} + {counter}" if "+" in text else f"{text} * {extent} + {counter}"
    return text


def lower_lp_pool(node: Node, ctx, g: PoolGeometry, p: float) -> None:
    """Render one Lp pooling over every (n, c) plane with window geometry g."""
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype.name not in DTYPES:
        raise UnsupportedError(f"{node.op_type} on {x.dtype.name} is not supported yet", node.where())
    if p <= 0:
        raise UnsupportedError(f"p = {p} (it must be positive)", node.where())
    if y.size == 0:
        return
    ctype = ctx.c_type(x)
    names = "dhw"
    dims = [_dim(n, g, d) for d, n in enumerate(names) if (g.inp[d], g.out[d], g.kernel[d]) != (1, 1, 1)]
    term, finish = _math(ctype, p)
    outs = [d for d in dims if d.o]
    ctx.emit("ops/lp_pool.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), ctype=ctype, planes=g.planes, dims=dims, outs=outs,
             in_plane=int(np.prod(g.inp)), out_plane=int(np.prod(g.out)), term=term, finish=finish,
             src_index=_index([d.i for d in dims], [d.inp for d in dims]) if dims else "0",
             dst_index=_index([d.o for d in outs], [d.out for d in outs]) if outs else "0")


@register
class LpPool(Op):
    op_type = "LpPool"
    attrs = {**POOL_ATTRS, "dilations": None, "p": 2}

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        lower_lp_pool(node, ctx, geometry(node), float(node.attrs["p"]))

    def flops(self, node: Node) -> int:
        return node.outputs[0].size * 2 * geometry(node).taps
