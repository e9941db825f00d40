"""SizeValues: an integer tensor whose elements are expressions of the run-time sizes (mlcc/extents.py).

Shape arithmetic folds at build time; where its result is read as data at run time (a KV cache's position
id, past + 0, looked up in the position embeddings) the fitted elements (`Value.variable_data`, cexpr.Sym)
are written by this internal op at the start of the run, each cast from size_t to the tensor's type."""

from __future__ import annotations

from ..cexpr import Sym
from ..ir import Node
from . import REQUIRED, Op, register

DOMAIN = "mlcc"


@register
class SizeValues(Op):
    op_type = "SizeValues"
    domain = DOMAIN
    attrs = {"values": REQUIRED}  # the elements in order: int or cexpr.Sym
    variable_extents = True  # its whole point: elements known only at run time

    def infer(self, node: Node):
        out = node.outputs[0]
        return [(out.dtype, out.shape)]

    def lower(self, node: Node, ctx) -> None:
        out = node.outputs[0]
        c_type = ctx.c_type(out)
        elements = [v.c() if isinstance(v, Sym) else str(int(v)) for v in node.attrs["values"]]
        ctx.emit("ops/size_values.c.j2", out=ctx.ptr(out), c_type=c_type, elements=elements)
