"""The intermediate representation: a graph of typed values and nodes, every shape static.

A `Value` is a tensor: a name, a dtype, a shape, and for constants the data. A `Node` applies one operator
(looked up in mlcc.ops by `op_type`) to input values and defines output values. `Graph.nodes` is kept in a
valid execution order. The text form (`format_graph`) is stable: pass tests and `--print-after` use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import MlccError


@dataclass(eq=False)
class Value:
    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    data: np.ndarray | None = None  # set for constants (weights, folded values)
    # bounded dynamic shapes (mlcc/extents.py): `shape` is the maximum; `extents` the same dims with a
    # cexpr.Sym where a dim varies at run time; `variable_data` a folded integer constant's elements as Syms
    extents: tuple | None = None
    variable_data: list | None = None
    folded_by: Node | None = None  # the node the frontend folded it with, if that read a run-time tensor's shape

    @property
    def is_const(self) -> bool:
        return self.data is not None

    @property
    def size(self) -> int:
        if any(not isinstance(d, (int, np.integer)) for d in self.shape):  # run-time extents (while lowering)
            return math.prod(self.shape)
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize

    def type_str(self) -> str:
        shape = self.extents if self.extents is not None else self.shape
        return f"{np.dtype(self.dtype).name}[{','.join(d.text() if hasattr(d, 'text') else str(d) for d in shape)}]"

    def __repr__(self) -> str:
        return f"%{self.name}:{self.type_str()}"


@dataclass(eq=False)
class Node:
    op_type: str
    name: str
    inputs: list[Value | None]  # None marks an omitted optional input
    outputs: list[Value]
    attrs: dict[str, Any] = field(default_factory=dict)  # parsed, ONNX defaults filled in by the op
    domain: str = ""
    opset: int = 0  # the model's opset for this node's domain: ops read version-dependent forms from it
    variable_attrs: dict[str, Any] = field(default_factory=dict)  # attrs that vary at run time (mlcc/extents.py)

    def input(self, i: int) -> Value | None:
        return self.inputs[i] if i < len(self.inputs) else None

    def where(self) -> str:
        return f"node {self.name!r} ({self.op_type})"

    def __repr__(self) -> str:
        return f"Node({self.op_type} {self.name!r})"


class Graph:
    def __init__(self, name: str = "model"):
        self.name = name
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.output_names: list[str] = []  # the ONNX names, kept when a pass swaps an output's value
        self.nodes: list[Node] = []

    # --- queries --------------------------------------------------------------------------------

    def consumers(self) -> dict[int, list[Node]]:
        uses: dict[int, list[Node]] = {}
        for n in self.nodes:
            for v in n.inputs:
                if v is not None:
                    uses.setdefault(id(v), []).append(n)
        return uses

    def values(self) -> list[Value]:
        """Every value, each once, in first-appearance order."""
        seen: dict[int, Value] = {}
        for v in self.inputs:
            seen.setdefault(id(v), v)
        for n in self.nodes:
            for v in [*n.inputs, *n.outputs]:
                if v is not None:
                    seen.setdefault(id(v), v)
        for v in self.outputs:
            seen.setdefault(id(v), v)
        return list(seen.values())

    def constants(self) -> list[Value]:
        return [v for v in self.values() if v.is_const]

    # --- edits ----------------------------------------------------------------------------------
    def replace_uses(self, old: Value, new: Value) -> None:
        for n in self.nodes:
            n.inputs = [new if v is old else v for v in n.inputs]
        self.outputs = [new if v is old else v for v in self.outputs]

    # --- checks ---------------------------------------------------------------------------------
    def verify(self) -> None:
        """Well formed: every input defined before use, every value produced once, static types."""
        defined = {id(v) for v in self.inputs}
        for n in self.nodes:
            for v in n.inputs:
                if v is not None and not v.is_const and id(v) not in defined:
                    raise MlccError(f"reads {v.name!r} before it is produced", n.where())
            for v in n.outputs:
                if id(v) in defined:
                    raise MlccError(f"output {v.name!r} is produced twice", n.where())
                if any((not isinstance(d, (int, np.integer))) or d < 0 for d in v.shape):
                    raise MlccError(f"output {v.name!r} has a non-static shape {v.shape}", n.where())
                defined.add(id(v))
        for v in self.outputs:
            if not v.is_const and id(v) not in defined:
                raise MlccError(f"graph output {v.name!r} is never produced")


def _format_attr(value: Any) -> str:
    if isinstance(value, Node):  # a fused node's member
        ins = ",".join("_" if v is None else f"%{v.name}" for v in value.inputs)
        return f"{value.op_type}({ins})"
    if isinstance(value, np.ndarray):
        return f"tensor<{value.dtype.name}[{','.join(map(str, value.shape))}]>"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_format_attr(x) for x in value) + "]"
    if isinstance(value, bytes):
        return repr(value.decode("utf-8", "replace"))
    return repr(value) if isinstance(value, str) else str(value)


INLINE_CONST_ELEMENTS = 16  # constants this small print their values; larger ones parse back as zeros


def _format_const(v: Value) -> str:
    if v.size <= INLINE_CONST_ELEMENTS:
        return f"  const {v!r} = {v.data.reshape(-1).tolist()!r}"
    return f"  const {v!r}"


def format_graph(graph: Graph) -> str:
    """The stable text form: one line per input, constant, node and output (parse_graph reads it)."""
    lines = [f"graph {graph.name}"]
    lines += [f"  input {v!r}" for v in graph.inputs]
    lines += [_format_const(v) for v in graph.constants()]
    for n in graph.nodes:
        ins = ", ".join("_" if v is None else f"%{v.name}" for v in n.inputs)
        outs = ", ".join(f"{v!r}" for v in n.outputs)
        attrs = "".join(f" {k}={_format_attr(v)}" for k, v in sorted(n.attrs.items()))
        lines.append(f"  {outs} = {n.op_type}({ins}){attrs}  # {n.name}")
    for v, name in zip(graph.outputs, graph.output_names):
        lines.append(f"  output %{v.name}" + (f" as {name!r}" if name != v.name else ""))
    return "\n".join(lines) + "\n"




_TYPED = r"%(?P<name>[^:\s]+):(?P<dtype>\w+)\[(?P<shape>[\d,]*)\]"


def _parse_typed(text: str) -> tuple[str, np.dtype, tuple[int, ...]]:
    import re

    m = re.fullmatch(_TYPED, text.strip())
    if not m:
        raise MlccError(f"IR text: expected %name:dtype[dims], got {text!r}")
    shape = tuple(int(d) for d in m["shape"].split(",") if d)
    return m["name"], np.dtype(m["dtype"]), shape


def _parse_attr(text: str) -> Any:
    import ast

    if text.startswith("tensor<"):
        raise MlccError("IR text: tensor attributes do not parse back")
    return ast.literal_eval(text)


def parse_graph(text: str) -> Graph:
    """Read the text form written by format_graph. Large constants (printed without values) become zeros."""
    import ast
    import re
    import shlex

    graph, values = None, {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("graph "):
            graph = Graph(line.split(None, 1)[1])
            continue
        if graph is None:
            raise MlccError("IR text: must start with `graph NAME`")
        if line.startswith("input "):
            v = Value(*_parse_typed(line[6:]))
            graph.inputs.append(v)
            values[v.name] = v
        elif line.startswith("const "):
            typed, _, data = line[6:].partition(" = ")
            name, dtype, shape = _parse_typed(typed)
            array = (np.array(ast.literal_eval(data), dtype=dtype).reshape(shape) if data
                     else np.zeros(shape, dtype=dtype))
            values[name] = Value(name, dtype, shape, array)
        elif line.startswith("output "):
            m = re.fullmatch(r"output %(\S+)(?: as (.+))?", line)
            graph.outputs.append(values[m[1]])
            graph.output_names.append(ast.literal_eval(m[2]) if m[2] else m[1])
        else:
            body, _, node_name = line.partition("  # ")
            lhs, _, rhs = body.partition(" = ")
            m = re.fullmatch(r"(\w+)\(([^)]*)\)(.*)", rhs.strip())
            if not m:
                raise MlccError(f"IR text: cannot read node line {line!r}")
            op_type, args, attr_text = m[1], m[2], m[3]
            inputs = [None if a.strip() == "_" else values[a.strip().lstrip("%")] for a in args.split(",") if a.strip()]
            outputs = [Value(*_parse_typed(t)) for t in lhs.split(", ")]
            attrs = {}
            for item in shlex.split(attr_text, posix=False):
                key, _, value = item.partition("=")
                attrs[key] = _parse_attr(value)
            graph.nodes.append(Node(op_type, node_name.strip(), inputs, outputs, attrs))
            values.update({v.name: v for v in outputs})
    if graph is None:
        raise MlccError("IR text: empty")
    return graph
