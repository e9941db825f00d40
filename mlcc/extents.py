"""Bounded dynamic shapes: dimensions that vary at run time within a range (`--dim seq=1..128`, or a range
inside `--shape x=1,3,32..640,32..640`).

The frontend and the passes work on static shapes, so the graph is built and optimised at sample sizes: every
variable at its maximum (the graph that is planned and lowered), at the corners one below the maximum, and at
two check points spread over the ranges (a different size for each variable). The graphs must agree node for node; every dimension, every
integer attribute and every element of a folded integer constant that differs between them is fitted as a
polynomial in the variables (affine in each: multilinear), which the check points must confirm. The fit is
stored on the maximum's graph as `Value.extents` and `Node.variable_attrs` (cexpr.Sym entries) and lowering
hands those to the ops that declare `variable_extents`; every other op refuses. A folded constant whose shape
varies is stored at the maximum and read as a prefix, which the samples must confirm too.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import onnx

from . import ops
from .cexpr import Sym, same
from .errors import MlccError, ShapeError, UsageError
from .ir import Graph, Node, Value


@dataclass(frozen=True)
class Variable:
    """A dimension that varies at run time: its name (the model's dim_param, or INPUT_AXIS for a range given
    in --shape), its range, and where it was given."""
    name: str
    low: int
    high: int

    def sym(self) -> Sym:
        return Sym.symbol(self.name, self.low, self.high)


def parse_range(text: str, what: str) -> int | tuple[int, int]:
    """`N` or `MIN..MAX` (whole numbers, 0 <= MIN < MAX: a KV cache's past length starts at 0)."""
    low, sep, high = text.partition("..")
    try:
        if not sep:
            return int(text)
        low_n, high_n = int(low), int(high)
    except ValueError:
        raise UsageError(f"{what}: dims must be whole numbers N or ranges MIN..MAX, separated by commas") from None
    if not 0 <= low_n < high_n:
        raise UsageError(f"{what}: a range MIN..MAX needs 0 <= MIN < MAX (got {low_n}..{high_n})")
    return (low_n, high_n)


def variables(model: onnx.ModelProto, shapes: dict, dims: dict) -> list[Variable]:
    """The variables the options declare: ranged --dim symbols, and ranges inside --shape (named after the
    model's dim_param at that axis, else INPUT_AXIS)."""
    found: dict[str, Variable] = {}
    for name, given in dims.items():
        if isinstance(given, tuple):
            found[name] = Variable(name, *given)
    declared = {i.name: list(i.type.tensor_type.shape.dim) for i in model.graph.input}
    for input_name, shape in shapes.items():
        for axis, given in enumerate(shape):
            if not isinstance(given, tuple):
                continue
            dim = declared.get(input_name, [])[axis] if axis < len(declared.get(input_name, [])) else None
            name = dim.dim_param if dim is not None and dim.dim_param else f"{input_name}_{axis}"
            known = found.get(name)
            if known is not None and (known.low, known.high) != given:
                raise UsageError(f"--shape {input_name}: dim {axis} ({name}) is given {given[0]}..{given[1]} here "
                                 f"and {known.low}..{known.high} elsewhere")
            found[name] = Variable(name, *given)
    return sorted(found.values(), key=lambda v: v.name)


def concrete(model: onnx.ModelProto, shapes: dict, dims: dict, sizes: dict[str, int]) -> tuple[dict, dict]:
    """The --shape and --dim overrides with every range replaced by its variable's size in `sizes`."""
    declared = {i.name: list(i.type.tensor_type.shape.dim) for i in model.graph.input}
    fixed_dims = {name: sizes[name] if isinstance(given, tuple) else given for name, given in dims.items()}
    fixed_shapes = {}
    for input_name, shape in shapes.items():
        out = []
        for axis, given in enumerate(shape):
            if isinstance(given, tuple):
                dim = declared.get(input_name, [])[axis] if axis < len(declared.get(input_name, [])) else None
                given = sizes[dim.dim_param if dim is not None and dim.dim_param else f"{input_name}_{axis}"]
            out.append(given)
        fixed_shapes[input_name] = tuple(out)
    return fixed_shapes, fixed_dims


def samples(variables: list[Variable]) -> list[dict[str, int]]:
    """The sizes to build at: the maximum first, the corners one below it, then the check points."""
    corners = [dict(zip([v.name for v in variables], c))
               for c in itertools.product(*[(v.high, v.high - 1) for v in variables])]
    # a size of 1 is no check: strides of a one-element axis are arbitrary, and passes drop such axes; each
    # variable gets its own value at a check point, so sizes computed from different variables never agree
    n = len(variables)
    spread = lambda v, k, at: min(v.high, max(v.low, 2, v.low + (v.high - v.low) * at // (2 * n + 1) + k))
    checks = [{v.name: spread(v, k, 2 * k + 1) for k, v in enumerate(variables)},
              {v.name: spread(v, 1, 2 * k + 2) for k, v in enumerate(variables)}]
    points = []
    for p in [*corners, *checks]:
        if p not in points:
            points.append(p)
    return points


def _monomials(variables: list[Variable]) -> list[tuple[str, ...]]:
    names = [v.name for v in variables]
    return [m for r in range(len(names) + 1) for m in itertools.combinations(names, r)]


class _Fitter:
    def __init__(self, variables: list[Variable], points: list[dict[str, int]]):
        self.variables = variables
        self.points = points
        self.monomials = _monomials(variables)
        self.ranges = {v.name: (v.low, v.high) for v in variables}
        # the corners determine the multilinear fit; the check points confirm it
        corners = 2 ** len(variables)
        basis = np.array([[np.prod([p[s] for s in m]) for m in self.monomials] for p in points[:corners]], dtype=np.float64)
        self.solve = np.linalg.inv(basis)
        self.corners = corners

    def fit(self, observed: list[int], points: list[dict[str, int]] | None = None) -> int | Sym | None:
        """The polynomial taking `observed[i]` at points[i] (the corners first), or None when no multilinear
        one does."""
        points = self.points if points is None else points
        if all(o == observed[0] for o in observed):
            return int(observed[0])
        coefficients = self.solve @ np.array(observed[:self.corners], dtype=np.float64)
        rounded = [int(round(c)) for c in coefficients]
        if any(abs(c - r) > 1e-6 for c, r in zip(coefficients, rounded)):
            return None
        fitted = Sym.of(Sym(dict(zip(self.monomials, rounded)), dict(self.ranges)))
        value = fitted.at if isinstance(fitted, Sym) else (lambda p: fitted)
        if any(value(p) != o for p, o in zip(points, observed)):
            return None
        return fitted


def _describe(points: list[dict[str, int]], observed: list) -> str:
    return ", ".join(f"{o} at {', '.join(f'{k}={v}' for k, v in p.items())}" for p, o in zip(points, observed))


def members(node: Node) -> list[Node]:
    """Nodes held in attributes (a fused node's body), depth first."""
    found = []
    for value in node.attrs.values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, Node):
                found += [item, *members(item)]
    return found


def _nodes(graph: Graph) -> list[Node]:
    return [m for n in graph.nodes for m in [n, *members(n)]]


def _values(node: Node) -> list[Value]:
    return [v for v in [*node.inputs, *node.outputs] if v is not None]


def annotate(graphs: list[Graph], variables: list[Variable], points: list[dict[str, int]]) -> dict:
    """Fit the graphs built at `points` (graphs[0] at the maximum) and record the varying extents on
    graphs[0]. Returns what it found: {"variable_values": n, "variable_attrs": n, "prefix_constants": n}."""
    fitter = _Fitter(variables, points)
    corners = fitter.corners
    node_lists = [_nodes(g) for g in graphs]
    for point, nodes in zip(points[1:corners], node_lists[1:corners]):
        where = ", ".join(f"{k}={v}" for k, v in point.items())
        if len(nodes) != len(node_lists[0]):
            raise ShapeError(f"the optimised graph at {where} has {len(nodes)} nodes, at the maximum "
                             f"{len(node_lists[0])}: the passes decide differently by size, so one artifact cannot "
                             "serve the range; narrow it or fix the size")
        for a, b in zip(node_lists[0], nodes):
            if (a.op_type, a.name, len(a.inputs), len(a.outputs)) != (b.op_type, b.name, len(b.inputs), len(b.outputs)):
                raise ShapeError(f"the optimised graph at {where} has {b.where()} where the maximum has {a.where()}: "
                                 "the passes decide differently by size; narrow the range or fix the size")

    # the check points' graphs may differ (a size of 1 lets passes drop a broadcast): matched by name there
    value_lists = [[*g.inputs, *g.outputs, *(v for n in nodes for v in _values(n))] for g, nodes in zip(graphs, node_lists)]
    by_name = [{v.name: v for v in values} for values in value_lists[corners:]]
    seen: dict[int, Value] = {}
    pending: dict[int, tuple] = {}
    corner_constants: list[Value] = []
    irregular: list[Value] = []
    constants: list[tuple] = []  # checked once every extent is known
    found = {"variable_values": 0, "variable_attrs": 0, "prefix_constants": 0}
    for alike in zip(*value_lists[:corners]):
        value = alike[0]
        if id(value) in seen:
            continue
        seen[id(value)] = value
        checks = [named.get(value.name) for named in by_name]
        present = [p for p, v in zip(points, [*alike, *checks]) if v is not None]
        alike = (*alike, *(v for v in checks if v is not None))
        ranks = {len(v.shape) for v in alike}
        if len(ranks) != 1:
            raise ShapeError(f"tensor {value.name!r} changes rank with the size ({_describe(present, [v.shape for v in alike])})")
        extents = [fitter.fit([int(v.shape[axis]) for v in alike], present) for axis in range(len(value.shape))]
        if any(e is None for e in extents):  # not multilinear: its producer may say (below)
            pending[id(value)] = (value, [tuple(int(d) for d in v.shape) for v in alike], present)
            continue
        if any(isinstance(e, Sym) for e in extents):
            value.extents = tuple(extents)
            found["variable_values"] += 1
        if value.is_const:
            constants.append((value, alike, present))

    # the tensors' run-time extents so far, for a dim its op takes from a folded operand (Resize's sizes)
    known = {e.text(): e for v in value_lists[0] if v.extents is not None for e in v.extents if isinstance(e, Sym)}
    for node in node_lists[0]:
        for value in node.outputs:
            if id(value) in pending:
                value.extents = _inferred(node, *pending.pop(id(value)), variables, tuple(known.values()))
                known.update((e.text(), e) for e in value.extents if isinstance(e, Sym))
                found["variable_values"] += 1
    for value, shapes, present in pending.values():  # no producer: a graph input or a constant
        raise ShapeError(f"tensor {value.name!r} has sizes that are not a multilinear function of "
                         f"{', '.join(v.name for v in variables)} ({_describe(present, shapes)}); build it at fixed sizes")
    for value, alike, present in constants:  # a folded shape element may be one of the extents (a pooled width)
        kind = _check_constant(value, alike, fitter, present, tuple(known.values()))
        found["prefix_constants"] += kind == 1
        corner_constants += [value] if kind == 2 else []
        irregular += [value] if kind == 3 else []

    found["unfolded_nodes"] = _unfold(graphs, irregular, fitter, points, corner_constants, variables)
    _corner_copies(graphs[0], corner_constants)
    found["corner_constants"] = len(corner_constants)
    found["size_values"] = _size_values(graphs[0])
    check_nodes = [{n.name: n for n in nodes} for nodes in node_lists[corners:]]
    for nodes in zip(*node_lists[:corners]):
        node = nodes[0]
        checks = [named.get(node.name) for named in check_nodes]
        present = [p for p, n in zip(points, [*nodes, *checks]) if n is not None and n.op_type == node.op_type]
        nodes = (*nodes, *(n for n in checks if n is not None and n.op_type == node.op_type))
        op = ops.of(node)
        for key, attr in node.attrs.items():
            others = [n.attrs.get(key) for n in nodes]
            if all(_same(attr, o) for o in others) or (op is not None and key in op.choices_for_bound):
                continue  # the same everywhere, or a choice made for the maximum (graphs[0]'s stands)
            fitted = _fit_attr(others, fitter, present)
            if fitted is None:
                raise ShapeError(f"attribute {key!r} changes with the size in a way mlcc cannot compute at run time "
                                 f"({_describe(present, others)})", node.where())
            node.variable_attrs[key] = fitted
            found["variable_attrs"] += 1
    return found


def _inferred(node: Node, value: Value, shapes: list[tuple], points: list[dict], variables, known: tuple = ()) -> tuple:
    """The extents of `value` (an output of `node`) that the fit could not find: the op's own shape
    inference over its inputs' run-time extents (a strided convolution: a floor division), else each dim
    equal to one of an input's dims or a product of adjacent ones (an elementwise op after it, a Flatten),
    else to one of the `known` extents of the graph (a Resize to another tensor's size, given as folded
    sizes), in every case confirmed at every sample and the only one that fits."""
    from . import ops

    def agrees(dim, axis: int) -> bool:
        return all((dim.at(p) if isinstance(dim, Sym) else dim) == shape[axis] for p, shape in zip(points, shapes))

    op = ops.lookup(node.op_type, node.domain)
    inputs = [v for v in node.inputs if v is not None]
    saved = [v.shape for v in inputs]
    inferred = None
    try:
        for v in inputs:
            v.shape = v.extents if v.extents is not None else v.shape
        result = op.infer(node) if op is not None else None
        index = next(i for i, out in enumerate(node.outputs) if out is value)
        if result is not None and len(result[index][1]) == len(shapes[0]):
            inferred = tuple(result[index][1])
    except (MlccError, TypeError, ValueError, StopIteration):
        inferred = None
    finally:
        for v, shape in zip(inputs, saved):
            v.shape = shape
    if inferred is not None and all(agrees(d, axis) for axis, d in enumerate(inferred)):
        return inferred
    rank = len(shapes[0])
    extents = []
    for axis in range(rank):
        if all(shape[axis] == shapes[0][axis] for shape in shapes):  # the same at every size
            extents.append(int(shapes[0][axis]))
            continue
        # the same axis of an input of the output's rank first (an elementwise op), then any dim or product
        # of adjacent dims (a Transpose, a Flatten), which must be the only size that fits
        aligned = [v.extents[axis] for v in inputs if v.extents is not None and len(v.extents) == rank]
        found = next((d for d in aligned if agrees(d, axis)), None)
        if found is None:
            fitting = []
            for v in inputs:
                dims = list(v.extents if v.extents is not None else v.shape)
                for d in dims + [a * b for a, b in zip(dims, dims[1:])]:
                    if agrees(d, axis) and not any(same(d, f) for f in fitting):
                        fitting.append(d)
            if not fitting:
                fitting = [d for d in known if agrees(d, axis)]
                fitting = [d for i, d in enumerate(fitting) if not any(same(d, f) for f in fitting[:i])]
            found = fitting[0] if len(fitting) == 1 else None
        if found is None:
            raise ShapeError(f"dim {axis} of tensor {value.name!r} is not a multilinear function of "
                             f"{', '.join(v.name for v in variables)} nor a size its op computes "
                             f"({_describe(points, [s[axis] for s in shapes])}); build it at fixed sizes", node.where())
        extents.append(found)
    return tuple(extents)


def _same(a, b) -> bool:
    if isinstance(a, Node) or isinstance(b, Node):
        return True  # members are matched as nodes
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _fit_attr(observed: list, fitter: _Fitter, points: list[dict[str, int]]):
    """An int attribute (or a nested list of them) fitted element by element; None when it cannot be."""
    first = observed[0]
    if isinstance(first, bool):
        return None
    if isinstance(first, (int, np.integer)):
        if not all(isinstance(o, (int, np.integer)) and not isinstance(o, bool) for o in observed):
            return None
        return fitter.fit([int(o) for o in observed], points)
    if isinstance(first, (list, tuple)):
        if not all(isinstance(o, (list, tuple)) and len(o) == len(first) for o in observed):
            return None
        items = [_fit_attr([o[i] for o in observed], fitter, points) for i in range(len(first))]
        if any(i is None and not all(_same(o[k], first[k]) for o in observed) for k, i in enumerate(items)):
            return None
        items = [first[k] if i is None else i for k, i in enumerate(items)]
        return type(first)(items)
    return None


def _element(observed: list[int], fitter: _Fitter, points, extents: tuple[Sym, ...]) -> int | Sym | None:
    fitted = fitter.fit(observed, points)
    if fitted is not None:
        return fitted
    return next((e for e in extents if all(e.at(p) == o for p, o in zip(points, observed))), None)


def _check_constant(value: Value, same: tuple[Value, ...], fitter: _Fitter, points, extents: tuple[Sym, ...] = ()) -> int:
    """A constant whose data changes with the size: integers of a fixed shape are shape arithmetic (each
    element fitted, or else equal at every sample to one of the tensors' `extents`, as a Shape of a pooled
    tensor is; `Value.variable_data`); a varying shape must be a prefix of the maximum's data (stored
    once, read as far as the size reaches), or else its leading corner (a causal mask: copied out at run time,
    see _corner_copies), or else computed at run time by the nodes that folded it (see _unfold). Returns 1 for
    a prefix constant, 2 for a corner one, 3 for one to unfold."""
    datas = [np.ascontiguousarray(v.data) for v in same]
    if all(d.shape == datas[0].shape and np.array_equal(d, datas[0]) for d in datas):
        return 0
    if all(d.shape == datas[0].shape for d in datas) and np.issubdtype(datas[0].dtype, np.integer):
        flat = [d.reshape(-1) for d in datas]
        elements = [_element([int(f[i]) for f in flat], fitter, points, extents) for i in range(flat[0].size)]
        if all(e is not None for e in elements):
            value.variable_data = elements
            return 0
    whole = datas[0].reshape(-1)
    if all(d.size <= whole.size and np.array_equal(whole[:d.size], d.reshape(-1)) for d in datas):
        return 1
    largest = datas[0]
    if all(d.ndim == largest.ndim and np.array_equal(largest[tuple(slice(0, n) for n in d.shape)], d) for d in datas):
        return 2
    if all(v.folded_by is not None for v in same):
        return 3  # computed at run time instead: see _unfold
    raise ShapeError(f"constant {value.name!r}, folded at build time, changes with the size in a way one stored "
                     f"tensor cannot serve (shapes {_describe(points, [d.shape for d in datas])}); build it at "
                     "fixed sizes")


def _corner_copies(graph: Graph, values: list[Value]) -> None:
    """Each constant whose value at a size is the leading corner of the maximum's (a causal mask [seq, seq])
    becomes a run-time tensor: a Slice at the graph's start copies that corner out of the stored maximum."""
    for value in values:
        largest = Value(f"{value.name}_largest", value.dtype, tuple(value.shape), value.data)
        rank = len(value.shape)
        ints = lambda name, data: Value(f"{value.name}_{name}", np.dtype(np.int64), (rank,), np.array(data, np.int64))
        value.data = None
        graph.nodes.insert(0, Node("Slice", f"{value.name}_corner",
                                   [largest, ints("starts", [0] * rank), ints("ends", list(value.shape)),
                                    ints("axes", list(range(rank)))], [value], opset=13))


def _folded_by_name(graph: Graph) -> dict[str, Value]:
    """The graph's values by name, and every value the frontend folded on the way to its constants."""
    found: dict[str, Value] = {}
    stack = [*graph.inputs, *graph.outputs, *(v for n in _nodes(graph) for v in _values(n))]
    while stack:
        value = stack.pop()
        if value is None or value.name in found:
            continue
        found[value.name] = value
        if value.folded_by is not None:
            stack += [v for v in [*value.folded_by.inputs, *value.folded_by.outputs] if v is not None]
    return found


def _unfold(graphs: list[Graph], irregular: list[Value], fitter: _Fitter, points, corner_constants: list[Value],
            variables) -> int:
    """Constants folded at build time that no one stored tensor serves (the position embedding of a KV cache's
    new token: the row at the past length) are computed at run time: the nodes the frontend folded them with go
    back at the start of the maximum's graph, down to inputs one stored tensor serves (the same at every size,
    a prefix, a corner, or integers fitted element by element: shape arithmetic). Returns the nodes put back."""
    if not irregular:
        return 0
    maps = [_folded_by_name(g) for g in graphs]
    placed: list[Node] = []
    visited: set[int] = set()

    def alike(value: Value) -> tuple[Value, ...]:
        same = tuple(m.get(value.name) for m in maps)
        if any(s is None for s in same):
            raise ShapeError(f"constant {value.name!r} changes with the size and is not folded alike at every size; "
                             "build it at fixed sizes")
        return same

    def fit_extents(value: Value, same: tuple[Value, ...]) -> None:
        if len({len(v.shape) for v in same}) != 1:
            raise ShapeError(f"tensor {value.name!r} changes rank with the size ({_describe(points, [v.shape for v in same])})")
        extents = [fitter.fit([int(v.shape[axis]) for v in same]) for axis in range(len(value.shape))]
        if any(e is None for e in extents):
            raise ShapeError(f"tensor {value.name!r} has sizes that are not a multilinear function of "
                             f"{', '.join(v.name for v in variables)} ({_describe(points, [v.shape for v in same])}); "
                             "build it at fixed sizes")
        value.extents = tuple(extents) if any(isinstance(e, Sym) for e in extents) else None

    def visit(value: Value) -> None:
        node = value.folded_by
        if id(node) in visited:
            return
        visited.add(id(node))
        for given in node.inputs:
            if given is None or not given.is_const:
                continue
            same = alike(given)
            fit_extents(given, same)
            kind = _check_constant(given, same, fitter, points)
            if kind == 3:
                visit(given)
            elif kind == 2 and all(given is not c for c in corner_constants):
                corner_constants.append(given)
        for out in node.outputs:
            fit_extents(out, alike(out))
            out.data, out.folded_by = None, None
        placed.append(node)  # after the nodes computing its inputs

    for value in irregular:
        visit(value)
    graphs[0].nodes[0:0] = placed
    return len(placed)


def _size_values(graph: Graph) -> int:
    """Folded integers fitted element by element (`Value.variable_data`) that a node reads as data, not as a
    build-time parameter (a position id, not a Reshape's shape), are written at run time by a SizeValues node
    at the graph's start. Returns how many."""
    from . import ops

    made: dict[int, Value] = {}
    for node in list(graph.nodes):
        op = ops.of(node)
        parameters = set(op.parameter_operands) | set(op.shape_operands) if op is not None else set()
        for index, given in enumerate(node.inputs):
            if given is None or given.variable_data is None or index in parameters:
                continue
            if id(given) not in made:
                made[id(given)] = Value(f"{given.name}_at_run_time", given.dtype, tuple(given.shape))
                graph.nodes.insert(0, Node("SizeValues", f"{given.name}_sizes", [], [made[id(given)]],
                                           {"values": list(given.variable_data)}, domain="mlcc"))
            for reader in [node, *members(node)]:
                reader.inputs = [made[id(given)] if v is given else v for v in reader.inputs]
    return len(made)


def at_max(value: Value) -> tuple:
    return value.shape


def symbolic_shape(value: Value) -> tuple:
    """The shape with its run-time extents (cexpr.Sym) where they vary."""
    return value.extents if value.extents is not None else tuple(value.shape)


def check_plan(program, memory) -> None:
    """Offsets are planned at the maximum: a tensor placed inside another at a non-zero offset (a Concat's
    later inputs, a Slice view), or written at another's pitch, would be misplaced at a smaller size."""
    for alias in memory.aliases:
        touched = [alias.value, alias.root, alias.link.parent]
        variable = next((v for v in touched if v.extents is not None), None)
        if variable is None or (alias.offset == 0 and alias.link.kind != "strided"):
            continue
        raise ShapeError(f"tensor {alias.value.name!r} shares the bytes of {alias.link.parent.name!r} "
                         f"({alias.link.kind}, {alias.offset} bytes in at the maximum), whose place depends on "
                         f"the run-time size of {variable.name!r}; fix the size or narrow the range")
