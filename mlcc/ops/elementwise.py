"""Elementwise operators, one table row each: a C expression over the operands a0, a1, ... (broadcast as
numpy does), with attributes substituted as float literals. Shapes and dtypes come from onnx's inference,
folding from onnx.reference; all that is ours is the expression, rendered by templates/ops/elementwise.c.j2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import cnames
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register_family
from ._broadcast import loop_nest

FLOAT = ("float32",)
SIGNED = ("float32", "float64", "int8", "int16", "int32", "int64")
NUMERIC = (*SIGNED, "uint8", "uint16", "uint32", "uint64")
ANY = (*NUMERIC, "bool")


@dataclass(frozen=True)
class Row:
    expr: str  # C expression; {name} is an attribute's value, a0.. the operands
    attrs: dict = field(default_factory=dict)
    dtypes: tuple[str, ...] = FLOAT  # allowed dtypes of the first operand
    flops: int = 1  # per output element


def _minmax(fn: str) -> Row:
    return Row(f"{fn}", dtypes=NUMERIC)


TABLE: dict[str, Row] = {
    # arithmetic (numpy broadcasting)
    "Add": Row("a0 + a1", dtypes=NUMERIC),
    "Sub": Row("a0 - a1", dtypes=NUMERIC),
    "Mul": Row("a0 * a1", dtypes=NUMERIC),
    "Div": Row("a0 / a1", dtypes=NUMERIC),
    "Pow": Row("powf(a0, (float)a1)"),
    "PRelu": Row("a0 < 0.0f ? a1 * a0 : a0"),
    # variadic: the expression is built from the operand count
    "Sum": Row("+", dtypes=NUMERIC),
    "Mean": Row("+"),
    "Min": _minmax("min"),
    "Max": _minmax("max"),
    # unary math
    "Sqrt": Row("sqrtf(a0)"),
    "Exp": Row("expf(a0)"),
    "Log": Row("logf(a0)"),
    "Neg": Row("-a0", dtypes=SIGNED),
    "Abs": Row("a0 < 0 ? -a0 : a0", dtypes=SIGNED),
    "Reciprocal": Row("1.0f / a0"),
    "Floor": Row("floorf(a0)"),
    "Ceil": Row("ceilf(a0)"),
    "Erf": Row("erff(a0)"),
    # activations
    "Relu": Row("a0 < 0 ? 0 : a0", dtypes=SIGNED),  # NaN passes through
    "LeakyRelu": Row("a0 >= 0.0f ? a0 : {alpha} * a0", {"alpha": 0.01}),
    "Elu": Row("a0 > 0.0f ? a0 : {alpha} * expm1f(a0)", {"alpha": 1.0}),
    "Selu": Row("a0 > 0.0f ? {gamma} * a0 : {gamma} * {alpha} * expm1f(a0)",
                {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}),
    "Sigmoid": Row("1.0f / (1.0f + expf(-a0))", flops=4),
    "HardSigmoid": Row("a0 != a0 ? a0 : fmaxf(0.0f, fminf(1.0f, {alpha} * a0 + {beta}))", {"alpha": 0.2, "beta": 0.5}),
    "HardSwish": Row("a0 * fmaxf(0.0f, fminf(1.0f, a0 * (1.0f / 6.0f) + 0.5f))"),
    "Tanh": Row("tanhf(a0)", flops=4),
    "Softplus": Row("a0 > 0.0f ? a0 + log1pf(expf(-a0)) : log1pf(expf(a0))", flops=4),
    "Gelu": Row("", {"approximate": "none"}, flops=8),  # expression chosen by `approximate`
    "Clip": Row("", {"min": None, "max": None}, dtypes=NUMERIC),  # bounds from attrs or inputs
    # comparison and logic (bool results)
    "Equal": Row("a0 == a1", dtypes=ANY),
    "Less": Row("a0 < a1", dtypes=NUMERIC),
    "LessOrEqual": Row("a0 <= a1", dtypes=NUMERIC),
    "Greater": Row("a0 > a1", dtypes=NUMERIC),
    "GreaterOrEqual": Row("a0 >= a1", dtypes=NUMERIC),
    "Not": Row("!a0", dtypes=("bool",)),
    "And": Row("a0 && a1", dtypes=("bool",)),
    "Or": Row("a0 || a1", dtypes=("bool",)),
    "Xor": Row("a0 != a1", dtypes=("bool",)),
    "Where": Row("a0 ? a1 : a2", dtypes=("bool",)),
    "Cast": Row("", {"to": None, "saturate": 1}, dtypes=ANY),
}

_GELU = {
    "none": "0.5f * a0 * (1.0f + erff(a0 * 0.70710678118654752f))",
    "tanh": "0.5f * a0 * (1.0f + tanhf(0.79788456080286536f * (a0 + 0.044715f * a0 * a0 * a0)))",
}


def _variadic(op_type: str, count: int, is_float: bool) -> str:
    names = [f"a{i}" for i in range(count)]
    if op_type in ("Sum", "Mean"):
        total = " + ".join(names)
        return f"({total}) * {cnames.float_literal(1.0 / count)}" if op_type == "Mean" and count > 1 else total
    fn = ("fminf" if is_float else "MLCC_MIN") if op_type == "Min" else ("fmaxf" if is_float else "MLCC_MAX")
    expr = names[0]
    for name in names[1:]:
        expr = f"{fn}({expr}, {name})"
    if is_float and count > 1:  # fminf/fmaxf drop a NaN operand; ONNX (and numpy) propagate it
        expr = f"({' || '.join(f'{n} != {n}' for n in names)}) ? {' + '.join(names)} : {expr}"
    return expr


def _make(op_type: str, row: Row) -> type[Op]:
    class ElementwiseOp(Op):
        elementwise = True
        inplace_safe = True
        attrs = dict(row.attrs)

        def expression(self, node: Node) -> tuple[str, list]:
            """The C expression and the operands it reads, in order."""
            operands = [v for v in node.inputs if v is not None]
            is_float = operands[0].dtype.kind == "f"
            if op_type in ("Sum", "Mean", "Min", "Max"):
                return _variadic(op_type, len(operands), is_float), operands
            if op_type == "Gelu":
                if node.attrs["approximate"] not in _GELU:
                    raise UnsupportedError(f"approximate={node.attrs['approximate']!r}", node.where())
                return _GELU[node.attrs["approximate"]], operands
            if op_type == "Cast":
                if node.outputs[0].dtype == np.bool_:
                    return "a0 != 0", operands
                return "a0", operands
            if op_type == "Clip":
                return self._clip(node)
            values = {k: cnames.float_literal(v) if isinstance(v, float) else v for k, v in node.attrs.items()}
            return row.expr.format(**values), operands

        def _clip(self, node: Node) -> tuple[str, list]:
            x = node.inputs[0]
            is_float = x.dtype.kind == "f"
            bounds, operands = [], [x]
            for i, attr, cmp, fn in ((1, "min", "<", "fmaxf"), (2, "max", ">", "fminf")):
                bound = node.input(i)
                if bound is not None and bound.is_const:
                    bound_text = _literal(bound.data.reshape(-1)[0], x.dtype)
                elif bound is not None:
                    operands.append(bound)
                    bound_text = f"a{len(operands) - 1}"
                elif node.opset < 11 and node.attrs.get(attr) is not None:
                    bound_text = _literal(node.attrs[attr], x.dtype)
                else:
                    continue
                bounds.append((bound_text, cmp, fn))
            expr = "a0"
            for text, cmp, fn in bounds:  # min(max(x, lo), hi): hi wins when lo > hi, as in numpy
                expr = f"{fn}({expr}, {text})" if is_float else f"({expr} {cmp} {text} ? {text} : {expr})"
            if is_float and bounds:  # fmaxf/fminf would replace a NaN by the bound
                expr = f"a0 != a0 ? a0 : {expr}"
            return expr, operands

        def lower(self, node: Node, ctx) -> None:
            expr, operands = self.expression(node)
            first = operands[0]
            if first.dtype.name not in row.dtypes:
                raise UnsupportedError(f"{op_type} on {first.dtype.name} is not supported yet", node.where())
            out = node.outputs[0]
            if any(v.dtype == np.float16 for v in [*operands, out]):  # stored as raw bits: C arithmetic is wrong
                raise UnsupportedError(f"{op_type} with float16 tensors is not supported yet", node.where())
            nest = loop_nest(out.shape, [v.shape for v in operands])
            ctx.emit("ops/elementwise.c.j2", nest=nest, expr=expr,
                     operands=[(ctx.c_type(v), ctx.ptr(v)) for v in operands], out=(ctx.c_type(out), ctx.ptr(out)))

        def flops(self, node: Node) -> int:
            return row.flops * node.outputs[0].size

    ElementwiseOp.op_type = op_type
    ElementwiseOp.__name__ = ElementwiseOp.__qualname__ = op_type
    return ElementwiseOp


def _literal(value, dtype: np.dtype) -> str:
    return cnames.float_literal(value) if np.dtype(dtype).kind == "f" else cnames.int_literal(int(value))


register_family(_make, TABLE)
