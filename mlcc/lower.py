"""Lowering: every node gets its implementation for the target, as C rendered from a template.

Each op's `lower(node, ctx)` calls `ctx.emit(template, **values)`; templates name tensors through
`ctx.ptr(value)` and may call runtime kernels declared by `ctx.use_kernels(family)`. Lowering also assigns
every tensor its C identifier (sanitised from the ONNX name) and records scratch buffers for the planner.
The step keeps as data what its C needs: the tensors named through ctx.ptr, ctx.constant and ctx.scratch,
and whether a template declared variables at its top level; code generation works from that, never from
the C text. Ops take kernels through `ctx.kernel(name)` (or a variant chooser that calls `ctx.uses_kernel`),
so each step also records which form of each kernel it calls: mlcc/slow_path.py reads that.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import cexpr, cnames, dtypes, extents, freestanding, kernels, ops
from .errors import UnsupportedError
from .ir import Graph, Node, Value
from .render import render_step
from .targets import Target


@dataclass(frozen=True)
class KernelUse:
    """A runtime kernel a step calls, and the form the target built it in: "vector" (on one ISA's intrinsics
    or a SIMD shim), "scalar" (a shim kernel or GEMM tile built lane by lane: no SIMD shim on the target),
    "reference" (the family's oracle: it has nothing faster for the target) or "portable" (a driver or
    layout helper, no arithmetic of its own to speed up)."""
    function: str
    family: str
    form: str


@dataclass
class Step:
    """One node's implementation: its C body and, as data, everything that body names, so code generation
    declares pointers, lays out weights and scopes the body without reading the C."""
    node: Node
    code: str = ""
    scratch: list[Value] = field(default_factory=list)  # live during this step only
    constants: list[Value] = field(default_factory=list)  # made by lowering (e.g. packed weights)
    uses: dict[int, Value] = field(default_factory=dict)  # id -> every tensor the code names, first use first
    scoped: bool = False  # the code declares variables at its top level: it gets its own block
    kernels: list[KernelUse] = field(default_factory=list)  # the runtime kernels the code calls, first call first
    parallel: bool = False  # the code hands `parallel` (the caller's parallel-for, or NULL) to its kernels

    def names(self, value: Value) -> bool:
        """Whether the step's code refers to `value`'s pointer."""
        return id(value) in self.uses

    @property
    def reads(self) -> list[Value]:
        return [v for v in self.node.inputs if v is not None and not v.is_const]

    @property
    def writes(self) -> list[Value]:
        return [v for v in self.node.outputs if v.name]  # an empty name is an omitted optional output


@dataclass
class StaticArray:
    ident: str
    c_type: str
    values: list
    comment: str = ""


@dataclass
class Preparation:
    """A constant computed at load time into the arena's prepared region (weights kept in the blob in their
    model form, e.g. Winograd's transform of a kernel): `value` holds what it computes (for its size and
    identity), `code` the C that writes it; codegen runs every preparation before the first step of the
    first run on an arena."""
    value: Value
    code: str


@dataclass
class Program:
    graph: Graph
    target: Target
    steps: list[Step]
    names: dict[int, str]  # id(Value) -> C identifier
    kernel_families: list[str]
    static_arrays: list[StaticArray]
    preparations: list[Preparation] = field(default_factory=list)


class LowerContext:
    def __init__(self, graph: Graph, target: Target):
        self.graph = graph
        self.target = target
        self.names: dict[int, str] = {}
        self._taken: set[str] = set()
        self.kernel_families: list[str] = []
        self.static_arrays: list[StaticArray] = []
        self.step: Step | None = None
        self._constants: dict[tuple, Value] = {}  # content -> the constant made first with it
        self.preparations: list[Preparation] = []
        for v in graph.values():
            self._name(v)

    def _name(self, value: Value) -> str:
        if id(value) not in self.names:
            prefix = "w_" if value.is_const else "t_"  # the generated file's header explains the prefixes
            self.names[id(value)] = cnames.fresh_identifier(value.name, prefix, self._taken)
        return self.names[id(value)]

    # --- what ops call --------------------------------------------------------------------------
    def ptr(self, value: Value) -> str:
        """The C identifier of a tensor's data pointer (typed by its dtype); the step's code uses it."""
        if self.step is not None:
            self.step.uses.setdefault(id(value), value)
        return self._name(value)

    def c_type(self, value_or_dtype) -> str:
        dtype = value_or_dtype.dtype if isinstance(value_or_dtype, Value) else value_or_dtype
        return dtypes.c_type(dtype)

    def use_kernels(self, family: str) -> None:
        """Link the runtime kernel family runtime_c/kernels/<family>/ and include its header."""
        if family not in self.kernel_families:
            self.kernel_families.append(family)

    def kernel(self, name: str) -> str:
        """The C function the target calls for kernel `name` (manifest name, no suffix: kernels.function):
        links its family and records on the step which form it is."""
        return self.uses_kernel(kernels.function(self.target, name))

    def uses_kernel(self, function: str, family: str = "", form: str = "") -> str:
        """Record that this step calls the C function `function` and link its family: for a kernel chosen
        from a family's [[variant]] rows rather than by name. A function its manifest's [[kernel]] rows list
        needs no family or form; a GEMM tile's configuration gives both (see KernelUse)."""
        assert self.step is not None
        if not family:
            row = kernels.by_function(self.target, function)
            family, form = row.family, kernels.form(self.target, row)
        assert form in ("vector", "scalar", "reference", "portable")
        self.use_kernels(family)
        use = KernelUse(function, family, form)
        if use not in self.step.kernels:
            self.step.kernels.append(use)
        return function

    def scratch(self, nbytes: int, hint: str = "scratch", dtype=np.float32) -> str:
        """Arena bytes live only during this step (e.g. an im2col buffer); returns its C identifier."""
        assert self.step is not None
        nbytes = cexpr.bound(nbytes)  # a run-time size gets room for its maximum
        count = max(1, -(-int(nbytes) // np.dtype(dtype).itemsize))
        value = Value(f"{self.step.node.name}_{hint}", np.dtype(dtype), (count,))
        self.step.scratch.append(value)
        return self.ptr(value)

    def constant(self, value: Value) -> str:
        """A constant made at build time (e.g. weights packed for a kernel): it joins the weights blob like
        a constant input; returns its C identifier. Constants are interned by content, so a form two steps
        make alike (one weight tensor packed the same way for each of its readers) is stored once."""
        assert self.step is not None and value.is_const
        data = np.ascontiguousarray(value.data, dtype=value.dtype)
        key = (data.dtype.str, data.shape, hashlib.sha256(data.tobytes()).digest())
        value = self._constants.setdefault(key, value)
        if all(v is not value for v in self.step.constants):
            self.step.constants.append(value)
        return self.ptr(value)

    def prepared(self, value: Value, template: str, sources: dict[str, Value], **values: Any) -> str:
        """A constant computed at load time rather than stored: `template` renders the C that writes it
        (named `into`) from `sources` (constants the weights blob holds, interned by content through
        ctx.constant: e.g. the model's own kernel, each passed to the template by its C identifier), once per
        arena, into the arena's prepared region.
        Interned by content like ctx.constant (then the sources are not named: the blob need not hold them
        for this step); returns its C identifier, which steps read like a constant's."""
        assert self.step is not None and value.is_const
        data = np.ascontiguousarray(value.data, dtype=value.dtype)
        key = ("prepared", data.dtype.str, data.shape, hashlib.sha256(data.tobytes()).digest())
        known = self._constants.get(key)
        if known is None:
            self._constants[key] = value
            named = {param: self.constant(source) for param, source in sources.items()}
            code, _ = render_step(template, into=self._name(value), **named, **values)
            self.preparations.append(Preparation(value, code.strip("\n")))
        else:
            value = known
        self.step.uses.setdefault(id(value), value)
        return self._name(value)

    def parallel(self) -> str | None:
        """The C name of the run's parallel-for (`const mlcc_parallel *`, NULL when NAME_run_v runs), for a
        kernel that cuts a large step into tasks (mlcc/parallel.h): its results must be bit-identical for any
        thread count and its tasks must share no workspace. None where the target runs steps whole
        (`parallel_steps = false`): the step calls the single-threaded kernel."""
        assert self.step is not None
        if not self.target.parallel_steps:
            return None
        self.step.parallel = True
        return "parallel"

    def static_array(self, hint: str, c_type: str, values, comment: str = "") -> str:
        """A `static const` array at file scope (shape tables, strides); returns its identifier."""
        ident = cnames.fresh_identifier(f"{self.step.node.name if self.step else ''}_{hint}", "k_", self._taken)
        self.static_arrays.append(StaticArray(ident, c_type, [int(x) if c_type != "float" else float(x) for x in values], comment))
        return ident

    def emit(self, template: str, **values: Any) -> None:
        """Render `template` (under mlcc/templates/) into this step's code. A template that declares variables
        at its top level says so with `{% set scoped = true %}` (or a condition): the step gets its own block."""
        assert self.step is not None
        code, scoped = render_step(template, **values)
        code = code.strip("\n")
        self.step.scoped = self.step.scoped or scoped
        self.step.code = f"{self.step.code}\n{code}" if self.step.code else code


def _variable_dims(node: Node) -> list[tuple[Value, int, cexpr.Sym]]:
    found = []
    for n in [node, *extents.members(node)]:
        for v in [*n.inputs, *n.outputs]:
            if v is not None and v.extents is not None:
                found += [(v, axis, e) for axis, e in enumerate(v.extents) if cexpr.is_variable(e)]
    return found


@contextlib.contextmanager
def _run_time_extents(node: Node, op: ops.Op):
    """While `op` lowers `node`, the shapes and attributes that vary at run time are their cexpr.Sym forms, so
    the op's arithmetic on them becomes C expressions of the run-time sizes. An op that does not declare
    `variable_extents`, or asks a question of a size that only the run can answer, is refused."""
    varying = _variable_dims(node)
    # folded integers that vary with the size (a Slice's starts from shape arithmetic): read through const_ints
    varying_data = [v for v in node.inputs if v is not None and v.variable_data is not None]
    if not varying and not node.variable_attrs and not varying_data:
        yield
        return
    value, axis, extent = varying[0] if varying else (None, 0, None)
    what = (f"dim {axis} of {value.name!r} is {extent.text()} ({_range_text(extent)})" if value is not None else
            f"attribute {next(iter(node.variable_attrs))!r} varies with the size" if node.variable_attrs else
            f"input {varying_data[0].name!r} holds values that vary with the size")
    if not op.variable_extents:
        raise UnsupportedError(f"{node.op_type} cannot take a run-time extent yet: {what}; fix the size "
                               "(--dim NAME=N) or narrow the range", node.where())
    swapped = {id(v): v for v, _, _ in varying}
    saved_shapes = {key: v.shape for key, v in swapped.items()}
    saved_attrs = dict(node.attrs)
    try:
        for v in swapped.values():
            v.shape = v.extents
        node.attrs.update(node.variable_attrs)
        yield
    except cexpr.VariableExtentError as exc:
        raise UnsupportedError(f"{node.op_type} cannot take a run-time extent here: {what}, and {exc}; fix the "
                               "size (--dim NAME=N) or narrow the range", node.where()) from None
    except (TypeError, ValueError) as exc:  # numpy or int() meeting a run-time size
        raise UnsupportedError(f"{node.op_type} cannot take a run-time extent here: {what} "
                               f"({type(exc).__name__}: {exc}); fix the size (--dim NAME=N) or narrow the range",
                               node.where()) from None
    finally:
        for key, v in swapped.items():
            v.shape = saved_shapes[key]
        node.attrs = saved_attrs


def _range_text(extent: cexpr.Sym) -> str:
    return ", ".join(f"{name} in {low}..{high}" for name, (low, high) in sorted(extent.ranges.items())
                     if name in extent.symbols)


def lower_graph(graph: Graph, target: Target) -> Program:
    ctx = LowerContext(graph, target)
    steps, missing = [], []
    for node in graph.nodes:
        op = ops.lookup(node.op_type, node.domain)
        if op is None or not op.can_lower:
            missing.append(node)
            continue
        if all(v.size == 0 for v in node.outputs):
            continue  # every output is empty: nothing to compute
        if not op.float16_native and any(v is not None and v.dtype == np.float16 for v in [*node.inputs, *node.outputs]):
            raise UnsupportedError(f"{node.op_type} computes float16 in float32 through the widen_float16 pass, "
                                   "which is disabled", node.where())
        ctx.step = Step(node)
        with _run_time_extents(node, op):
            op.lower(node, ctx)
        if not target.libc:
            freestanding.check_step(ctx.step, target)
        steps.append(ctx.step)
    if missing:
        listed = ", ".join(f"{n.op_type} ({n.name!r})" for n in missing)
        raise UnsupportedError(f"no implementation for {len(missing)} node(s) on target {target.name}: {listed}")
    ctx.step = None
    if not target.libc:
        ctx.use_kernels(freestanding.FAMILY)  # the runtime's own math and memory functions
    if target.thread_pool:
        ctx.use_kernels("threadpool")  # mlcc/threadpool.h: a ready mlcc_parallel for NAME_run_parallel
    return Program(graph, target, steps, ctx.names, ctx.kernel_families, ctx.static_arrays, ctx.preparations)
