"""Einsum: any equation, lowered to one loop nest. The output's labels are the outer loops (so the output is
written in order), the summed labels the inner ones; each operand is read through a stride per label (0
when it lacks the label or broadcasts a size-1 ellipsis dim; a label repeated in one operand, a diagonal,
adds up its strides). Without "->" the output is the ellipsis dims then the labels used once, sorted.
Rendered by templates/ops/einsum.c.j2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import contiguous_strides

DTYPES = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


@dataclass
class Plan:
    labels: dict[str, int]  # label -> extent; ellipsis dims are "0", "1", ... (outermost first)
    operands: list[list[str]]  # each operand's label per dim
    output: list[str]

    @property
    def summed(self) -> list[str]:
        return [label for label in self.labels if label not in self.output]


def _split(term: str, rank: int | None, ellipsis_rank: int, where: str) -> list[str]:
    """A term's labels, its "..." expanded to the last dims of the ellipsis labels."""
    if term.count("...") > 1 or "." in term.replace("...", ""):
        raise ShapeError(f"malformed einsum term {term!r}", where)
    head, dots, tail = term.partition("...")
    if any(not c.isalpha() for c in head + tail):
        raise ShapeError(f"malformed einsum term {term!r}", where)
    count = 0 if not dots else (ellipsis_rank if rank is None else rank - len(head) - len(tail))
    if count < 0 or (rank is not None and not dots and len(head) != rank):
        raise ShapeError(f"einsum term {term!r} does not match an operand of rank {rank}", where)
    return [*head, *[str(ellipsis_rank - count + k) for k in range(count)], *tail]


def plan(equation: str, shapes: list[tuple[int, ...]], where: str) -> Plan:
    text = equation.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ShapeError(f"the equation {equation!r} has {len(terms)} operands, the node {len(shapes)}", where)
    ellipsis_rank = max((len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t), default=0)
    operands = [_split(t, len(s), ellipsis_rank, where) for t, s in zip(terms, shapes)]
    labels: dict[str, int] = {str(k): 1 for k in range(ellipsis_rank)}
    for term, shape in zip(operands, shapes):
        for label, extent in zip(term, shape):
            known = labels.get(label)
            if label.isdigit() and (known == 1 or extent == 1):  # ellipsis dims broadcast
                labels[label] = max(known or 1, extent)
            elif known is not None and known != extent:
                raise ShapeError(f"label {label!r} has extents {known} and {extent}", where)
            else:
                labels[label] = extent
    if arrow:
        out = _split(output, None, ellipsis_rank, where)
        if len(set(out)) != len(out) or any(label not in labels for label in out):
            raise ShapeError(f"the output term {output!r} repeats a label or names one no input has", where)
    else:
        letters = [c for term in operands for c in term if not c.isdigit()]
        out = [str(k) for k in range(ellipsis_rank)] + sorted({c for c in letters if letters.count(c) == 1})
    return Plan(labels, operands, out)


@register
class Einsum(Op):
    op_type = "Einsum"
    vector_families = ("f32-gemm",)
    attrs = {"equation": None}

    def plan(self, node: Node) -> Plan:
        equation = node.attrs.get("equation")
        if not equation:
            raise UnsupportedError("attribute 'equation' is required", node.where())
        return plan(equation, [v.shape for v in node.inputs], node.where())

    def infer(self, node: Node):
        p = self.plan(node)
        return [(node.inputs[0].dtype, tuple(p.labels[label] for label in p.output))]

    def flops(self, node: Node) -> int:
        p = self.plan(node)
        return len(node.inputs) * int(np.prod(list(p.labels.values()), dtype=np.int64))

    def lower(self, node: Node, ctx) -> None:
        y = node.outputs[0]
        if y.dtype.name not in DTYPES:
            raise UnsupportedError(f"Einsum on {y.dtype.name} is not supported yet", node.where())
        if y.size == 0:
            return
        p = self.plan(node)
        counter = {label: f"i_{label}" if not label.isdigit() else f"i_e{label}" for label in p.labels}
        looped = {label for label, extent in p.labels.items() if extent != 1}  # size-1 labels stay at 0
        reads = []
        for value, term in zip(node.inputs, p.operands):
            strides: dict[str, int] = {}
            for label, extent, stride in zip(term, value.shape, contiguous_strides(value.shape)):
                if extent != 1:  # a size-1 dim broadcasts
                    strides[label] = strides.get(label, 0) + stride
            index = " + ".join(counter[label] if s == 1 else f"{counter[label]} * {s}u"
                               for label, s in strides.items() if label in looped) or "0"
            reads.append(f"{ctx.ptr(value)}[{index}]")
        out_strides = dict(zip(p.output, contiguous_strides([p.labels[label] for label in p.output])))

        def loops(labels):
            return [(counter[label], p.labels[label]) for label in labels if label in looped]

        ctx.emit("ops/einsum.c.j2", y=ctx.ptr(y), ctype=ctx.c_type(y), equation=node.attrs["equation"],
                 outer=loops(p.output), inner=loops(p.summed), product=" * ".join(reads),
                 out_index=" + ".join(counter[label] if s == 1 else f"{counter[label]} * {s}u"
                                      for label, s in out_strides.items() if label in looped) or "0")
