"""Elementwise operators, one table row each: a C expression over the operands (broadcast as numpy does).
Shapes and dtypes come from onnx's inference, folding from onnx.reference; all that is ours is the
expression, rendered by templates/ops/elementwise.c.j2.

A row is a str.format template filled per node: {a0}, {a1}, ... are the operands (and a Form's temps are
named fields too), {name} an attribute's value as a literal, and the element type's math spelling is
parameters: {sqrt}, {exp}, ... the <math.h> functions, {f} the floating literal suffix, {real} the real type.
Double and integer operands take the names as written; float32 takes the float forms (sqrtf, 1.0f, float),
and exp, tanh and erf the runtime's inline forms (mlcc/simd/math-scalar.h via the f32-vmath family), which
the compiler vectorises where libm calls stop it. Which operands and functions the C uses is what the
template asked for. A lone float32 op of a row with a `vmath` function over contiguous elements calls that
f32-vmath array function instead of a loop. Rows whose code depends on attributes, operand types or the
operand count give a function of the node returning a Form instead of a string.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .. import cnames
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, Role, register_family
from ._broadcast import loop_nest

REAL = ("float32", "float64")
SIGNED_INTS = ("int8", "int16", "int32", "int64")
UNSIGNED_INTS = ("uint8", "uint16", "uint32", "uint64")
INTS = (*SIGNED_INTS, *UNSIGNED_INTS)
SIGNED = (*REAL, *SIGNED_INTS)
NUMERIC = (*SIGNED, *UNSIGNED_INTS)
ANY = (*NUMERIC, "bool")


@dataclass(frozen=True)
class Form:
    """A row's C as templates (see the module's doc)."""
    expr: str  # the output element's value
    temps: list[tuple[str, str]] = field(default_factory=list)  # (name, expr): consts of the first operand's type


@dataclass(frozen=True)
class Body:
    """A node's C in its element type, with what it uses."""
    expr: str  # the output element's value
    temps: list[tuple[str, str]] = field(default_factory=list)  # (name, expr): consts of the first operand's type
    reads: frozenset[int] = frozenset()  # the operands (indices) the code reads
    inline_math: bool = False  # calls mlcc/simd/math-scalar.h: needs the f32-vmath family


@dataclass(frozen=True)
class Row:
    expr: str | Callable[[Node], Form]
    attrs: dict = field(default_factory=dict)
    dtypes: tuple[str, ...] = REAL  # allowed dtypes of the first operand
    flops: int = 1  # per output element
    domain: str = ""
    moves_bits: bool = False  # only selects values: float16 bits pass through as they are
    # as a fused GEMM/conv epilogue (runtime_c/include/mlcc/activation.h): the kind, or a function of the
    # node giving (kind, a, b) or None when this node's form does not fit
    activation: str | Callable[[Node], tuple[str, float, float] | None] = ""
    vmath: str | Callable[[Node], str] = ""  # the f32-vmath array function computing it, if any
    quantized_form: str | None = None  # Op.quantized_form (passes/lower_quantized_islands)


# --- rows that depend on the node -----------------------------------------------------------------
def _operand(i: int) -> str:
    return f"{{a{i}}}"


def _names(node: Node) -> list[str]:
    return [_operand(i) for i in range(sum(v is not None for v in node.inputs))]


def _is_float(node: Node) -> bool:
    return node.inputs[0].dtype.kind == "f"


def _sum(node: Node) -> Form:
    return Form(" + ".join(_names(node)))


def _mean(node: Node) -> Form:
    names = _names(node)
    return Form(f"({' + '.join(names)}) / {_real_literal(len(names))}" if len(names) > 1 else names[0])


def _extremum(float_fn: str, int_macro: str) -> Callable[[Node], Form]:
    def build(node: Node) -> Form:
        names = _names(node)
        fn = f"{{{float_fn}}}" if _is_float(node) else int_macro
        expr = names[0]
        for name in names[1:]:
            expr = f"{fn}({expr}, {name})"
        if _is_float(node) and len(names) > 1:  # fmin/fmax drop a NaN operand; ONNX (and numpy) propagate it
            expr = f"({' || '.join(f'{n} != {n}' for n in names)}) ? {' + '.join(names)} : {expr}"
        return Form(expr)
    return build


_GELU = {
    "none": "0.5{f} * {a0} * (1.0{f} + {erf}({a0} * 0.70710678118654752{f}))",
    "tanh": "0.5{f} * {a0} * (1.0{f} + {tanh}(0.79788456080286536{f} * ({a0} + 0.044715{f} * {a0} * {a0} * {a0})))",
}


def _gelu(node: Node) -> Form:
    if node.attrs["approximate"] not in _GELU:
        raise UnsupportedError(f"approximate={node.attrs['approximate']!r}", node.where())
    return Form(_GELU[node.attrs["approximate"]])


def _clip(node: Node) -> Form:
    """min(max(x, lo), hi) with bounds from constant inputs (literals), run-time inputs or opset < 11 attributes."""
    x = node.inputs[0]
    is_float = _is_float(node)
    bounds = []
    for i, attr, cmp, fn in ((1, "min", "<", "fmax"), (2, "max", ">", "fmin")):
        bound = node.input(i)
        if bound is not None and bound.is_const:
            text = _literal(bound.data.reshape(-1)[0], x.dtype)
        elif bound is not None:
            text = _operand(sum(v is not None for v in node.inputs[:i]))  # a constant bound is an operand too
        elif node.opset < 11 and node.attrs.get(attr) is not None:
            text = _literal(node.attrs[attr], x.dtype)
        else:
            continue
        bounds.append((text, cmp, fn))
    expr = "{a0}"
    for text, cmp, fn in bounds:  # hi wins when lo > hi, as in numpy
        expr = f"{{{fn}}}({expr}, {text})" if is_float else f"({expr} {cmp} {text} ? {text} : {expr})"
    if is_float and bounds:  # fmax/fmin would replace a NaN by the bound
        expr = f"{{a0}} != {{a0}} ? {{a0}} : {expr}"
    return Form(expr)


def _clip_activation(node: Node) -> tuple[str, float, float] | None:
    """Clip with constant (or absent) bounds, as the epilogue's clamp."""
    bounds = []
    for i, attr, default in ((1, "min", -math.inf), (2, "max", math.inf)):
        bound = node.input(i)
        if bound is not None and not bound.is_const:
            return None
        if bound is not None:
            bounds.append(float(bound.data.reshape(-1)[0]))
        elif node.opset < 11 and node.attrs.get(attr) is not None:
            bounds.append(float(node.attrs[attr]))
        else:
            bounds.append(default)
    return ("clip", *bounds)


def _mod(node: Node) -> Form:
    """fmod=1: C's fmod/% (sign of the dividend); fmod=0: the sign of the divisor, as numpy's mod."""
    kind = node.inputs[0].dtype.kind
    if node.attrs["fmod"]:
        return Form("{fmod}({a0}, {a1})" if kind == "f" else "{a0} % {a1}")
    if kind == "u":
        return Form("{a0} % {a1}")
    if kind == "f":  # a zero remainder takes the divisor's sign; inf divisors keep finite dividends
        return Form("{r} != 0 ? (({r} < 0) != ({a1} < 0) ? {r} + {a1} : {r}) : {copysign}(0.0{f}, {a1})",
                    [("r", "{fmod}({a0}, {a1})")])
    return Form("{r} != 0 && ({r} < 0) != ({a1} < 0) ? {r} + {a1} : {r}", [("r", "{a0} % {a1}")])


def _bit_shift(node: Node) -> Form:
    """Shifts by a negative count or by the width or more give 0 (or -1 for a negative signed right shift),
    as onnx specifies; a signed left shift shifts the bits as unsigned."""
    dtype = node.inputs[0].dtype
    width = dtype.itemsize * 8
    direction = node.attrs["direction"]
    signed = dtype.kind == "i"
    out_of_range = f"{{a1}} < 0 || {{a1}} >= {width}" if signed else f"{{a1}} >= {width}"
    if direction == "RIGHT":
        return Form(f"{out_of_range} ? {'({a0} < 0 ? -1 : 0)' if signed else '0'} : {{a0}} >> {{a1}}")
    if direction == "LEFT":
        shifted = f"(u{dtype.name}_t){{a0}} << {{a1}}" if signed else "{a0} << {a1}"
        return Form(f"{out_of_range} ? 0 : {shifted}")
    raise UnsupportedError(f"direction={direction!r}", node.where())


def _abs(node: Node) -> Form:
    return Form("{a0}" if node.inputs[0].dtype.kind == "u" else "{a0} < 0 ? -{a0} : {a0}")  # unsigned: no sign to drop


def _sign(node: Node) -> Form:
    if node.inputs[0].dtype.kind == "u":
        return Form("{a0} > 0")
    return Form("{a0} > 0 ? 1 : ({a0} < 0 ? -1 : {a0})")  # NaN stays NaN


def _is_inf(node: Node) -> Form:
    tests = [test for flag, test in (("detect_positive", "{a0} == INFINITY"), ("detect_negative", "{a0} == -INFINITY"))
             if node.attrs[flag]]
    return Form("isinf({a0})" if len(tests) == 2 else (tests[0] if tests else "false"))


TABLE: dict[str, Row] = {
    # arithmetic (numpy broadcasting)
    "Add": Row("{a0} + {a1}", dtypes=NUMERIC, quantized_form="add"),
    "Sub": Row("{a0} - {a1}", dtypes=NUMERIC),
    "Mul": Row("{a0} * {a1}", dtypes=NUMERIC, quantized_form="mul"),
    "Div": Row("{a0} / {a1}", dtypes=NUMERIC),
    "Pow": Row("{pow}(({real}){a0}, ({real}){a1})", dtypes=NUMERIC, flops=8),  # integer bases via double, as onnxruntime
    "Mod": Row(_mod, {"fmod": 0}, dtypes=NUMERIC),
    "PRelu": Row("{a0} < 0 ? {a1} * {a0} : {a0}", dtypes=NUMERIC),
    # variadic
    "Sum": Row(_sum, dtypes=NUMERIC, quantized_form="add"),  # of two 8-bit tensors: a QuantizedAdd
    "Mean": Row(_mean),
    "Min": Row(_extremum("fmin", "MLCC_MIN"), dtypes=NUMERIC),
    "Max": Row(_extremum("fmax", "MLCC_MAX"), dtypes=NUMERIC),
    # unary math
    "Sqrt": Row("{sqrt}({a0})"),
    "Exp": Row("{exp}({a0})", vmath="exp"),
    "Log": Row("{log}({a0})"),
    "Neg": Row("-{a0}", dtypes=SIGNED),
    "Abs": Row(_abs, dtypes=NUMERIC),
    "Sign": Row(_sign, dtypes=NUMERIC),
    "Reciprocal": Row("1.0{f} / {a0}"),
    "Floor": Row("{floor}({a0})"),
    "Ceil": Row("{ceil}({a0})"),
    "Round": Row("{rint}({a0})"),  # halves to even in the default rounding mode
    "Erf": Row("{erf}({a0})", flops=8, vmath="erf"),
    "Sin": Row("{sin}({a0})", flops=8),
    "Cos": Row("{cos}({a0})", flops=8),
    "Tan": Row("{tan}({a0})", flops=8),
    "Asin": Row("{asin}({a0})", flops=8),
    "Acos": Row("{acos}({a0})", flops=8),
    "Atan": Row("{atan}({a0})", flops=8),
    "Sinh": Row("{sinh}({a0})", flops=8),
    "Cosh": Row("{cosh}({a0})", flops=8),
    "Asinh": Row("{asinh}({a0})", flops=8),
    "Acosh": Row("{acosh}({a0})", flops=8),
    "Atanh": Row("{atanh}({a0})", flops=8),
    # activations
    "Relu": Row("{a0} < 0 ? 0 : {a0}", dtypes=SIGNED, activation="relu"),  # NaN passes through
    "LeakyRelu": Row("{a0} >= 0.0{f} ? {a0} : {alpha} * {a0}", {"alpha": 0.01},
                     activation=lambda node: ("leaky_relu", node.attrs["alpha"], 0.0)),
    "Elu": Row("{a0} > 0.0{f} ? {a0} : {alpha} * {expm1}({a0})", {"alpha": 1.0}),
    "Celu": Row("{a0} > 0.0{f} ? {a0} : {alpha} * {expm1}({a0} / {alpha})", {"alpha": 1.0}),
    "Selu": Row("{a0} > 0.0{f} ? {gamma} * {a0} : {gamma} * {alpha} * {expm1}({a0})",
                {"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875}),
    "ThresholdedRelu": Row("{a0} > {alpha} ? {a0} : 0.0{f}", {"alpha": 1.0}),
    "Shrink": Row("{a0} < -{lambd} ? {a0} + {bias} : ({a0} > {lambd} ? {a0} - {bias} : 0)", {"bias": 0.0, "lambd": 0.5},
                  dtypes=NUMERIC),
    "Sigmoid": Row("1.0{f} / (1.0{f} + {exp}(-{a0}))", flops=4, activation="sigmoid", vmath="sigmoid"),
    "HardSigmoid": Row("{a0} != {a0} ? {a0} : {fmax}(0.0{f}, {fmin}(1.0{f}, {alpha} * {a0} + {beta}))",
                       {"alpha": 0.2, "beta": 0.5},
                       activation=lambda node: ("hard_sigmoid", node.attrs["alpha"], node.attrs["beta"])),
    "HardSwish": Row("{a0} * {fmax}(0.0{f}, {fmin}(1.0{f}, {a0} * 0.1666666716337204{f} + 0.5{f}))",  # alpha 1/6 as a float, as onnx
                     activation="hard_swish"),
    "Swish": Row("{a0} / (1.0{f} + {exp}(-{alpha} * {a0}))", {"alpha": 1.0}, flops=4),
    "Tanh": Row("{tanh}({a0})", flops=4, activation="tanh", vmath="tanh"),
    "Softplus": Row("{a0} > 0.0{f} ? {a0} + {log1p}({exp}(-{a0})) : {log1p}({exp}({a0}))", flops=4),
    "Softsign": Row("{a0} / (1.0{f} + {fabs}({a0}))", flops=3),
    "Mish": Row("{a0} * {tanh}({log1p}({exp}({a0})))", flops=8),
    "Gelu": Row(_gelu, {"approximate": "none"}, flops=8,
                activation=lambda node: ({"none": "gelu_erf", "tanh": "gelu_tanh"}.get(node.attrs["approximate"]), 0.0, 0.0),
                vmath=lambda node: {"none": "gelu_erf", "tanh": "gelu_tanh"}.get(node.attrs["approximate"], "")),
    "Clip": Row(_clip, {"min": None, "max": None}, dtypes=NUMERIC, activation=_clip_activation),
    # comparison and logic (bool results)
    "Equal": Row("{a0} == {a1}", dtypes=ANY),
    "Less": Row("{a0} < {a1}", dtypes=NUMERIC),
    "LessOrEqual": Row("{a0} <= {a1}", dtypes=NUMERIC),
    "Greater": Row("{a0} > {a1}", dtypes=NUMERIC),
    "GreaterOrEqual": Row("{a0} >= {a1}", dtypes=NUMERIC),
    "IsNaN": Row("{a0} != {a0}"),
    "IsInf": Row(_is_inf, {"detect_negative": 1, "detect_positive": 1}),
    "Not": Row("!{a0}", dtypes=("bool",)),
    "And": Row("{a0} && {a1}", dtypes=("bool",)),
    "Or": Row("{a0} || {a1}", dtypes=("bool",)),
    "Xor": Row("{a0} != {a1}", dtypes=("bool",)),
    "Where": Row("{a0} ? {a1} : {a2}", dtypes=("bool",), moves_bits=True),
    # bits
    "BitwiseAnd": Row("{a0} & {a1}", dtypes=INTS),
    "BitwiseOr": Row("{a0} | {a1}", dtypes=INTS),
    "BitwiseXor": Row("{a0} ^ {a1}", dtypes=INTS),
    "BitwiseNot": Row("~{a0}", dtypes=INTS),
    "BitShift": Row(_bit_shift, {"direction": None}, dtypes=INTS),
    # ai.onnx.ml
    "Binarizer": Row("{a0} > {threshold} ? 1 : 0", {"threshold": 0.0}, dtypes=(*REAL, "int32", "int64"),
                     domain="ai.onnx.ml"),
}

# --- the element type's spelling -------------------------------------------------------------------
_MATH = ("sqrt exp expm1 log log1p erf floor ceil rint sin cos tan asin acos atan sinh cosh tanh asinh acosh "
         "atanh fabs fmin fmax fmod copysign pow").split()
_INLINE = {"exp": "mlcc_f32_exp", "tanh": "mlcc_f32_tanh", "erf": "mlcc_f32_erf"}  # mlcc/simd/math-scalar.h
_DOUBLE = {**{name: name for name in _MATH}, "f": "", "real": "double"}
_FLOAT = {**{name: _INLINE.get(name, name + "f") for name in _MATH}, "f": "f", "real": "float"}


def spelling(dtype: np.dtype) -> dict[str, str]:
    """The template parameters naming the math of operands of `dtype`: float32's own, else double's."""
    return _FLOAT if np.dtype(dtype) == np.float32 else _DOUBLE


class _Fields(dict):
    """Fills a row's template, recording the fields it asks for."""

    def __init__(self, values: dict[str, str]):
        super().__init__(values)
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)


def render(form: Form, dtype: np.dtype, operands: list[str], attrs: dict[str, str] | None = None,
           temp_prefix: str = "") -> Body:
    """A row's form as C for operands of `dtype` named `operands`, its temps' names prefixed by temp_prefix."""
    fields = _Fields({**spelling(dtype), **(attrs or {}), **{f"a{i}": name for i, name in enumerate(operands)},
                      **{name: temp_prefix + name for name, _ in form.temps}})
    expr = form.expr.format_map(fields)
    temps = [(fields[name], code.format_map(fields)) for name, code in form.temps]
    reads = frozenset(i for i in range(len(operands)) if f"a{i}" in fields.asked)
    inline = np.dtype(dtype) == np.float32 and any(name in fields.asked for name in _INLINE)
    return Body(expr, temps, reads, inline)


def _real_literal(x: float, suffix: str = "{f}") -> str:
    """A floating literal: a template's (suffix {f}, the element type's), or with a suffix given."""
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "(-INFINITY)"
    text = repr(x)
    if "e" not in text and "." not in text:
        text += ".0"
    text += suffix
    return f"({text})" if text.startswith("-") else text

# what passes recognising formulas see in these ops (mlcc.ops.Role)
ROLES = {"Add": Role.ADD, "Sub": Role.SUB, "Mul": Role.MUL, "Div": Role.DIV, "Neg": Role.NEG, "Pow": Role.POW,
         "Reciprocal": Role.RECIPROCAL, "Sum": Role.SUM, "Sqrt": Role.SQRT, "Exp": Role.EXP, "Erf": Role.ERF,
         "Tanh": Role.TANH, "Sigmoid": Role.SIGMOID, "Gelu": Role.GELU, "Where": Role.SELECT}


def _literal(value, dtype: np.dtype) -> str:
    return _real_literal(value) if np.dtype(dtype).kind == "f" else cnames.int_literal(int(value))


def _make(op_type: str, row: Row) -> type[Op]:
    class ElementwiseOp(Op):
        elementwise = True
        variable_extents = True  # one loop nest over the output (ops/_broadcast.py takes run-time extents)
        inplace_safe = True
        in_place = True  # elementwise.c.j2 loads every operand at an index before storing there
        attrs = dict(row.attrs)
        domain = row.domain
        float16_native = row.moves_bits
        role = ROLES.get(op_type)
        # between DQ and Q, of one 8-bit tensor (other operands constant scalars): a table lookup
        quantized_form = row.quantized_form or "lookup"

        def body(self, node: Node, operands: list[str] | None = None, temp_prefix: str = "") -> Body:
            """The node's code in the first operand's type, its operands named `operands` (else a0, a1, ...)."""
            dtype = node.inputs[0].dtype
            if operands is None:
                operands = [f"a{i}" for i in range(sum(v is not None for v in node.inputs))]
            if callable(row.expr):
                return render(row.expr(node), dtype, operands, temp_prefix=temp_prefix)
            suffix = spelling(dtype)["f"]
            values = {k: _real_literal(v, suffix) for k, v in node.attrs.items() if isinstance(v, float)}
            return render(Form(row.expr), dtype, operands, values, temp_prefix)

        def lower(self, node: Node, ctx) -> None:
            operands = [v for v in node.inputs if v is not None]
            first, out = operands[0], node.outputs[0]
            if first.dtype.name not in row.dtypes:
                raise UnsupportedError(f"{op_type} on {first.dtype.name} is not supported yet", node.where())
            if not row.moves_bits and any(v.dtype == np.float16 for v in [*operands, out]):  # stored as raw bits: C arithmetic is wrong
                raise UnsupportedError(f"{op_type} with float16 tensors is not supported yet", node.where())
            nest = loop_nest(out.shape, [v.shape for v in operands])
            vmath = row.vmath(node) if callable(row.vmath) else row.vmath
            if vmath and first.dtype == np.float32 and nest.flat and nest.operand_index == [nest.out_index]:
                ctx.use_kernels("f32-vmath")
                ctx.emit("ops/vmath.c.j2", kernel=ctx.kernel(f"mlcc_f32_vmath_{vmath}"), n=out.size,
                         x=ctx.ptr(first), y=ctx.ptr(out))
                return
            body = self.body(node)
            if body.inline_math:
                ctx.use_kernels("f32-vmath")
            read = [i in body.reads for i in range(len(operands))]
            loads = [(ctx.c_type(v), f"a{i}", f"{ctx.ptr(v)}[{nest.operand_index[i]}]")
                     for i, v in enumerate(operands) if read[i]]
            unread = [ctx.ptr(v) for i, v in enumerate(operands) if not read[i]]
            ctx.emit("ops/elementwise.c.j2", nest=nest, loads=loads, temps=[(ctx.c_type(first), n, e) for n, e in body.temps],
                     expr=body.expr, out=f"{ctx.ptr(out)}[{nest.out_index}]", unread=unread)

        def flops(self, node: Node) -> int:
            return row.flops * node.outputs[0].size

        def fusable(self, node: Node) -> bool:
            """Can this node join a fused loop (passes/fuse_elementwise): its body() is what lower() uses."""
            operands = [v for v in node.inputs if v is not None]
            return (operands[0].dtype.name in row.dtypes
                    and not any(v.dtype == np.float16 for v in [*operands, *node.outputs]))

        def fused_activation(self, node: Node) -> tuple[str, float, float] | None:
            if not row.activation or node.outputs[0].dtype != np.float32:
                return None
            found = row.activation(node) if callable(row.activation) else (row.activation, 0.0, 0.0)
            return found if found is not None and found[0] else None

    ElementwiseOp.op_type = op_type
    ElementwiseOp.__name__ = ElementwiseOp.__qualname__ = op_type
    return ElementwiseOp


register_family(_make, TABLE)
