"""ONNX ModelProto -> ir.Graph, with every value typed and every shape static.

Loading refuses external data outside the model's folder. Local functions are inlined. Types come, per
node in order, from (1) evaluating the op's reference when every input is a constant (this folds shape
computations such as Shape -> Gather -> Concat -> Reshape), else (2) the op's own `infer`, else (3) onnx's
per-node shape inference given the small constant inputs' values.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import control_flow, dtypes, functions, ops, sequences
from .errors import MlccError, ModelLoadError, NeedsConstantError, ShapeError, UnsupportedError, UsageError
from .ir import Graph, Node, Value

log = logging.getLogger("mlcc")

MIN_OPSET = 1
MAX_TENSOR_BYTES = 4 << 30  # one tensor larger than this is refused before anything is allocated
MAX_ARENA_BYTES = 4 << 30  # so is a memory plan larger than this (checked before any file is written)
MAX_FOLDED_BYTES = 1 << 30  # and folding that grows constants by more than this in total, before it runs
_INFER_DATA_LIMIT = 1 << 16  # constants up to this many elements are shown to onnx's shape inference


@dataclass
class ShapeOverrides:
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)  # --shape INPUT=D0,D1,...
    dims: dict[str, int] = field(default_factory=dict)  # --dim SYMBOL=N
    frozen: dict[str, np.ndarray] = field(default_factory=dict)  # --freeze INPUT=V0,V1,...: input made a constant


# --- loading ------------------------------------------------------------------------------------
def load_model(path: str | os.PathLike) -> onnx.ModelProto:
    path = Path(path)
    if not path.is_file():
        raise ModelLoadError("no such model file", str(path))
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # protobuf raises several unrelated types on garbage input
        raise ModelLoadError(f"not a readable ONNX model ({type(exc).__name__})", str(path)) from None
    if not model.HasField("graph"):
        raise ModelLoadError("the file holds no ONNX graph", str(path))
    _load_external_data(model, path.parent)
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        text = " ".join(str(exc).split())[:400] or type(exc).__name__  # the checker's node dumps span lines
        raise ModelLoadError(f"invalid ONNX model: {text}", str(path)) from None
    if model.functions:
        from onnx import inliner

        model = inliner.inline_local_functions(model)
    return model


def _load_external_data(model: onnx.ModelProto, folder: Path) -> None:
    from onnx.external_data_helper import _get_all_tensors, load_external_data_for_tensor, uses_external_data

    base = folder.resolve()
    for tensor in _get_all_tensors(model):
        if not uses_external_data(tensor):
            continue
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        where = f"initializer {tensor.name!r}"
        if not location or os.path.isabs(location) or ".." in Path(location).parts:
            raise ModelLoadError(f"external data location {location!r} is outside the model's folder", where)
        resolved = (base / location).resolve()
        if base not in resolved.parents or not resolved.is_file():
            raise ModelLoadError(f"external data file {location!r} is missing or outside the model's folder", where)
        try:
            load_external_data_for_tensor(tensor, str(base))
        except Exception as exc:
            raise ModelLoadError(f"cannot read external data {location!r}: {exc}", where) from None
        del tensor.external_data[:]
        tensor.data_location = onnx.TensorProto.DEFAULT


# --- import -------------------------------------------------------------------------------------
def import_model(model: onnx.ModelProto, overrides: ShapeOverrides | None = None, name: str = "model") -> Graph:
    overrides = overrides or ShapeOverrides()
    opsets = {o.domain or "": o.version for o in model.opset_import}
    default_opset = opsets.get("", 0)
    newest = onnx.defs.onnx_opset_version()
    uses_default_domain = any(n.domain in ("", "ai.onnx") for n in model.graph.node)
    if (uses_default_domain or default_opset) and not MIN_OPSET <= default_opset <= newest:
        raise UnsupportedError(f"default-domain opset {default_opset} is outside the supported {MIN_OPSET}..{newest}")

    g = model.graph
    graph = Graph(name)
    values: dict[str, Value] = {}
    for init in g.initializer:
        data = dtypes.tensor_array(init, f"initializer {init.name!r}")
        if not dtypes.is_supported(data.dtype):
            raise UnsupportedError(f"element type {data.dtype} is not supported", f"initializer {init.name!r}")
        values[init.name] = Value(init.name, data.dtype, tuple(data.shape), np.asarray(data, order="C"))

    real_inputs = [i for i in g.input if i.name not in values]  # inputs with initializers are constants
    _check_overrides(real_inputs, overrides)
    for info in real_inputs:
        value = Value(info.name, *_input_type(info, overrides))
        values[info.name] = value
        if info.name in overrides.frozen:
            value.data = _frozen_value(value, overrides.frozen[info.name])
        else:
            graph.inputs.append(value)

    _check_ops(g.node, opsets)
    try:
        _import_nodes(g, graph, values, opsets, default_opset)
    except NeedsConstantError as exc:
        explain_needs_constant(exc, graph)
        raise
    _warn_uncompiled_branches(graph)

    where = f"graph {g.name!r}"
    for out in g.output:
        if out.name not in values:
            raise ModelLoadError(f"graph output {out.name!r} is never produced", where)
        if out.name in graph.output_names:
            raise ModelLoadError(f"graph output {out.name!r} is listed twice", where)
        if isinstance(values[out.name], sequences.Sequence):
            raise UnsupportedError(f"graph output {out.name!r} is a sequence; mlcc compiles sequences away, so a graph "
                                   "output must be a tensor", where)
        _check_declared_output(out, values[out.name])
        graph.outputs.append(values[out.name])
        graph.output_names.append(out.name)
    if not graph.outputs:
        raise ModelLoadError("the graph has no outputs", where)
    return graph


def _check_declared_output(info: onnx.ValueInfoProto, value: Value) -> None:
    """A graph output's declared type must be what the graph computes (the header promises it); a declared shape
    that differs is a warning."""
    where = f"graph output {info.name!r}"
    if info.type.WhichOneof("value") != "tensor_type":
        return
    tt = info.type.tensor_type
    if tt.elem_type and tt.elem_type != dtypes.to_onnx(value.dtype):
        declared = onnx.TensorProto.DataType.Name(tt.elem_type).lower()
        raise ShapeError(f"is declared {declared} but the graph computes {value.dtype}", where)
    if not tt.HasField("shape"):
        return
    dims = list(tt.shape.dim)
    fixed = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in dims]
    if len(dims) != len(value.shape) or any(f is not None and f != n for f, n in zip(fixed, value.shape)):
        # Exporters and old onnx shape inference declare stale shapes (onnxmltools' LightGBM label [1] at any batch,
        # ceil-mode pools at opsets 10-11); onnxruntime runs such models with the computed shape, and so does mlcc:
        # the header states the computed one, so nothing it promises is wrong.
        shown = [f if f is not None else (d.dim_param or "?") for f, d in zip(fixed, dims)]
        log.warning("warning: %s: is declared with shape [%s] but the graph computes [%s]; the computed shape is used",
                    where, ", ".join(map(str, shown)), ", ".join(map(str, value.shape)))


def explain_needs_constant(exc: NeedsConstantError, graph: Graph) -> None:
    """Name the graph inputs the missing constant is computed from, and how to freeze them."""
    if exc.graph_inputs:
        return
    exc.graph_inputs = _graph_inputs_behind(exc.value_name, graph)
    if exc.graph_inputs == [exc.value_name]:
        exc.message += f"; it is a graph input: fix its values with --freeze {exc.value_name}=V0,V1,..."
    elif exc.graph_inputs:
        exc.message += (f"; it is computed from graph input(s) {', '.join(map(repr, exc.graph_inputs))}: fix their "
                        "values with --freeze NAME=V0,V1,...")


def _graph_inputs_behind(name: str, graph: Graph) -> list[str]:
    """The graph inputs whose values `name` is computed from (inputs read for their type only do not count)."""
    producers = {v.name: n for n in graph.nodes for v in n.outputs}
    inputs = {v.name for v in graph.inputs}
    found, seen, stack = [], set(), [name]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in inputs:
            found.append(current)
        elif current in producers:
            node = producers[current]
            skip = ops.lookup(node.op_type, node.domain).type_only_operands
            stack.extend(v.name for i, v in enumerate(node.inputs) if v is not None and not v.is_const and i not in skip)
    return sorted(found)


def _import_nodes(g: onnx.GraphProto, graph: Graph, values: dict[str, Value], opsets: dict[str, int], default_opset: int) -> None:
    """Type each node in order into graph.nodes, expanding control flow and function bodies as they come."""
    top = list(g.node)  # held, so each id() below stays this proto's
    labels = {id(proto): node_label(proto, index) for index, proto in enumerate(top)}
    state = _Expansion(labels, default_opset)
    _import_items([(proto, opsets) for proto in top], graph.nodes, values, state)


@dataclass
class _Expansion:
    labels: dict[int, str]  # top-level protos' names for messages
    default_opset: int
    count: int = 0  # expansions so far: each one's prefix is unique
    folded: list[int] = field(default_factory=lambda: [0])  # bytes of constants folded so far, against MAX_FOLDED_BYTES


def _import_items(items: list, nodes: list[Node], values: dict[str, Value], state: _Expansion) -> None:
    # A stack of (NodeProto, opsets), control_flow.Continuation and control_flow.Trial items: expansions go on top.
    pending = list(reversed(items))
    control = control_flow.expanders()
    while pending:
        item = pending.pop()
        if isinstance(item, control_flow.Continuation):
            pending.extend(reversed(item.run(values)))
            continue
        if isinstance(item, control_flow.Trial):
            tried, seen = [], dict(values)
            try:
                _import_items(item.items, tried, seen, state)
            except MlccError as exc:
                item.error = exc
            else:
                nodes.extend(tried)
                values.update(seen)
            continue
        proto, node_opsets = item
        op = ops.lookup(proto.op_type, proto.domain)
        node_name = state.labels.get(id(proto)) or node_label(proto, len(nodes))
        where = f"node {node_name!r} ({proto.op_type})"
        opset = node_opsets.get(proto.domain or "", state.default_opset)
        _check_reads(proto, values, where)
        if not proto.domain and proto.op_type in control:
            state.count += 1
            pending.extend(reversed(control[proto.op_type](proto, node_opsets, values, f"{node_name}__c{state.count}_", where)))
            continue
        if op is None or op.prefers_function(proto, opset):
            state.count += 1
            body = _function_body(op, proto, opset, values, f"{node_name}__f{state.count}_", where)
            pending.extend((inner, {**node_opsets, **body_opsets}) for inner, body_opsets in reversed(body))
            continue
        inputs = [values[name] if name else None for name in proto.input]
        if any(isinstance(v, sequences.Sequence) for v in inputs):
            if proto.op_type == "Identity" and not proto.domain:
                values[proto.output[0]] = inputs[0]
                continue
            raise UnsupportedError("it reads a sequence; mlcc compiles sequences away through the sequence ops only", where)
        node = Node(proto.op_type, node_name, inputs, [], op.parse_attrs(proto, where), proto.domain or "", opset)
        _type_node(node, op, proto, list(proto.output), where, state.folded)
        for v in node.outputs:
            values[v.name] = v
        nodes.append(node)


def _warn_uncompiled_branches(graph: Graph) -> None:
    """One warning per If whose branch was left out: why, what the run returns, and the --freeze that removes it."""
    seen = set()
    for node in graph.nodes:
        if node.op_type != "BranchGuard" or node.attrs["if_node"] in seen:
            continue
        seen.add(node.attrs["if_node"])
        left_out = "else_branch" if node.attrs["taken"] else "then_branch"
        behind = _graph_inputs_behind(node.inputs[0].name, graph)
        freeze = (f"its condition is computed from input(s) {', '.join(map(repr, behind))}: "
                  f"{' '.join(f'--freeze {name}=...' for name in behind)} removes the branch") if behind else ""
        log.warning("warning: %s: its %s cannot be compiled for these shapes (%s); when the condition chooses it at "
                    "run time, the model returns MLCC_ERROR_UNCOMPILED_BRANCH (3)%s", node.attrs["if_node"], left_out,
                    node.attrs["reason"], "; " + freeze if freeze else "")


def _check_reads(proto: onnx.NodeProto, values: dict[str, Value], where: str) -> None:
    for name in proto.input:
        if name and name not in values:
            raise ModelLoadError(f"reads {name!r}, which no node produces", where)


def _function_body(op: ops.Op | None, proto: onnx.NodeProto, opset: int, values: dict[str, Value], prefix: str, where: str):
    """The nodes of an op's function body (its own, else ONNX's), each with the body's opset imports."""
    own = op.function_body(proto, opset, prefix) if op is not None else None
    if own is not None:
        body, body_opsets = own
        return [(inner, body_opsets) for inner in body]
    types = []
    for name in proto.input:
        value = values.get(name)
        types.append(helper.make_tensor_type_proto(dtypes.to_onnx(value.dtype), value.shape) if value is not None
                     else onnx.TypeProto())
    try:
        expanded = functions.expand(proto, opset, types, prefix)
    except Exception as exc:  # onnx's function builders raise on inputs they do not accept
        raise UnsupportedError(f"cannot expand its ONNX function body: {exc}", where) from None
    if expanded is None:
        raise UnsupportedError(f"unsupported operator {proto.op_type}", where)
    body, body_opsets = expanded
    return [(inner, body_opsets) for inner in body]


def _check_ops(nodes, opsets: dict[str, int]) -> None:
    """Refuse the model at once, listing every operator mlcc cannot take, subgraphs (If, Loop, Scan) included."""
    missing = list(_unsupported(nodes, opsets, ""))
    if missing:
        raise UnsupportedError(f"unsupported operator(s): {', '.join(missing)}")


def _unsupported(nodes, opsets: dict[str, int], scope: str):
    default_opset = opsets.get("", 0)
    for index, n in enumerate(nodes):
        name = node_label(n, index, scope)
        if (ops.lookup(n.op_type, n.domain) is None and not (not n.domain and n.op_type in control_flow.expanders())
                and not functions.has_body(n, opsets.get(n.domain or "", default_opset))):
            yield f"{n.op_type}{' (' + n.domain + ')' if n.domain else ''} in node {name!r}"
        for attr in n.attribute:
            for sub in [attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs:
                yield from _unsupported(sub.node, opsets, f"{name}/{attr.name}/")


def node_label(proto: onnx.NodeProto, index: int, scope: str = "") -> str:
    """A node's name for messages: its own, or its op type and index in its graph when it has none."""
    return proto.name or f"{scope}{proto.op_type}_{index}"


def _frozen_value(value: Value, given) -> np.ndarray:
    data = np.asarray(given)
    if data.size != int(np.prod(value.shape, dtype=np.int64)):
        raise UsageError(f"--freeze {value.name}: {data.size} values given, the input has shape {list(value.shape)}")
    if data.dtype != value.dtype and not np.can_cast(data.dtype, value.dtype, "same_kind"):
        raise UsageError(f"--freeze {value.name}: values of type {data.dtype} do not fit the input's {value.dtype}")
    return np.asarray(data.astype(value.dtype).reshape(value.shape), order="C")


def _check_overrides(inputs, overrides: ShapeOverrides) -> None:
    names = [i.name for i in inputs]
    for name in overrides.frozen:
        if name not in names:
            raise UsageError(f"--freeze names unknown input {name!r}; the model's inputs are: {', '.join(names) or 'none'}")
    for name in overrides.shapes:
        if name not in names:
            raise UsageError(f"--shape names unknown input {name!r}; the model's inputs are: {', '.join(names) or 'none'}")
    symbols = {d.dim_param for i in inputs for d in i.type.tensor_type.shape.dim if d.dim_param}
    for sym in overrides.dims:
        if sym not in symbols:
            raise UsageError(f"--dim names unknown symbol {sym!r}; the model's symbolic dims are: {', '.join(sorted(symbols)) or 'none'}")


def _input_type(info: onnx.ValueInfoProto, overrides: ShapeOverrides) -> tuple[np.dtype, tuple[int, ...]]:
    where = f"input {info.name!r}"
    if info.type.WhichOneof("value") != "tensor_type":
        raise UnsupportedError("only tensor inputs are supported", where)
    tt = info.type.tensor_type
    dtype = dtypes.from_onnx(tt.elem_type, where)
    declared = list(tt.shape.dim) if tt.HasField("shape") else None
    if info.name in overrides.shapes:
        shape = overrides.shapes[info.name]
        if declared is not None and len(declared) != len(shape):
            raise UsageError(f"--shape gives {len(shape)} dims but {info.name!r} has rank {len(declared)}")
        for d, given in zip(declared or [], shape):  # dim_value <= 0 is free (PaddlePaddle writes -1)
            if d.HasField("dim_value") and d.dim_value > 0 and d.dim_value != given:
                raise UsageError(f"--shape {info.name}: dim {given} contradicts the model's fixed {d.dim_value}")
        return dtype, tuple(shape)
    if declared is None:
        raise ShapeError(f"has no declared shape; give it with --shape {info.name}=D0,D1,...", where)
    shape = []
    for axis, d in enumerate(declared):
        if d.HasField("dim_value") and d.dim_value >= 0:
            shape.append(d.dim_value)
        elif d.HasField("dim_value"):
            raise ShapeError(f"dim {axis} is free ({d.dim_value}); give --shape {info.name}=D0,D1,...", where)
        elif d.HasField("dim_param") and d.dim_param in overrides.dims:
            shape.append(overrides.dims[d.dim_param])
        elif d.HasField("dim_param") and d.dim_param:
            raise ShapeError(f"dim {axis} is symbolic ({d.dim_param!r}); give --dim {d.dim_param}=N (or {d.dim_param}=MIN..MAX "
                             f"to set it at run time) or --shape {info.name}=...", where)
        else:
            raise ShapeError(f"dim {axis} is unknown; give --shape {info.name}=D0,D1,...", where)
    return dtype, tuple(shape)


# --- typing -------------------------------------------------------------------------------------
def _type_node(node: Node, op: ops.Op, proto: onnx.NodeProto, out_names: list[str], where: str,
               folded: list[int] | None = None) -> None:
    present = [v for v in node.inputs if v is not None]
    node.outputs = [Value(n, np.dtype("float32"), ()) for n in out_names]  # placeholders until typed
    types = op.infer(node)
    if types is None:
        types = _onnx_infer(node, proto, where)
    if types is not None:
        for v, (dtype, shape) in zip(node.outputs, types):
            v.dtype, v.shape = np.dtype(dtype), tuple(int(d) for d in shape)
            if v.nbytes > MAX_TENSOR_BYTES:
                raise ShapeError(f"output {v.name!r} would take {v.nbytes} bytes, over the {MAX_TENSOR_BYTES} limit", where)
    # always_folded ops (Shape, Size, Constant) fold even on run-time inputs: they read only types
    valued = [v for i, v in enumerate(node.inputs) if v is not None and i not in op.type_only_operands]
    foldable = op.always_folded or (bool(present) and all(v.is_const for v in valued))
    if foldable:
        if types is not None and folded is not None:  # count what folding adds beyond its inputs and attributes
            folded[0] += max(0, sum(v.nbytes for v in node.outputs) - sum(v.nbytes for v in present) - proto.ByteSize())
            if folded[0] > MAX_FOLDED_BYTES:
                raise ShapeError(f"folding it to a constant would bring the build-time constants to {folded[0]} bytes, "
                                 f"over the {MAX_FOLDED_BYTES} limit", where)
        try:
            results = op.reference(node, [None if v is None else v.data for v in node.inputs])
        except MlccError:
            raise
        except Exception as exc:  # the reference refuses inputs the model should not have given it
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise ShapeError(f"cannot evaluate it at build time: {type(exc).__name__}: {first}", where) from None
        # a fold that reads a run-time tensor's shape, directly or through another such fold, may differ by
        # size: remember its node (mlcc/extents.py puts it back when no stored tensor serves every size)
        from_shapes = op.always_folded and any(not v.is_const for v in present)
        from_shapes = from_shapes or any(v.folded_by is not None for v in present)
        for v, data in zip(node.outputs, results):
            data = np.asarray(data, order="C")  # keeps 0-d scalars 0-d, unlike ascontiguousarray
            v.dtype, v.shape, v.data = data.dtype, tuple(data.shape), data
            v.folded_by = node if from_shapes else None
        return
    if op.value_dependent_shape:
        for index in op.shape_operands:
            value = node.input(index)
            if value is not None and not value.is_const:
                raise NeedsConstantError(f"its output shape depends on the values of input {value.name!r}, known only at "
                                         "run time; mlcc needs them at build time (a constant, or computed from shapes only)",
                                         where, value.name)
        raise ShapeError("its output shape depends on input values known only at run time; "
                         "mlcc compiles such ops only when their inputs are constants", where)
    if types is None:
        raise ShapeError("cannot infer its output shapes; set the input shapes with --shape/--dim", where)


def _onnx_infer(node: Node, proto: onnx.NodeProto, where: str):
    """Output types from onnx's shape inference. Some schema versions infer no shapes per node: those
    defined by a function body (GreaterOrEqual-12) are inferred through the body in a one-node model;
    others by the nearest newer version of the same form (inputs and attributes)."""
    try:
        schema = onnx.defs.get_schema(node.op_type, node.opset, node.domain)
    except Exception:
        return None
    types, data = {}, {}
    for v in node.inputs:
        if v is None:
            continue
        types[v.name] = helper.make_tensor_type_proto(dtypes.to_onnx(v.dtype), list(v.shape))
        if v.is_const and v.size <= _INFER_DATA_LIMIT:
            data[v.name] = numpy_helper.from_array(v.data, v.name)
    try:
        inferred = onnx.shape_inference.infer_node_outputs(
            schema, proto, types, data, opset_imports=[helper.make_opsetid(node.domain, node.opset)])
        result = _static_types(node, inferred, where)
        if result is None and (schema.has_function or schema.has_context_dependent_function):
            result = _static_types(node, _infer_in_model(node, proto, types, data), where)
        for version in [] if result is not None else ops.same_form_versions(node.op_type, node.domain, node.opset,
                                                                            {a.name for a in proto.attribute}):
            newer = onnx.defs.get_schema(node.op_type, version, node.domain)
            result = _static_types(node, onnx.shape_inference.infer_node_outputs(
                newer, proto, types, data, opset_imports=[helper.make_opsetid(node.domain, version)]), where)
            if result is not None:
                break
    except Exception as exc:
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ShapeError(f"shape inference failed: {message}", where) from None
    return result


def _infer_in_model(node: Node, proto: onnx.NodeProto, types: dict, data: dict) -> dict:
    """onnx's model-level shape inference of the node alone: it expands function bodies."""
    graph = helper.make_graph([proto], "infer", [helper.make_value_info(name, t) for name, t in types.items()],
                              [helper.make_value_info(v.name, onnx.TypeProto()) for v in node.outputs],
                              list(data.values()))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain, node.opset)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    return {info.name: info.type for info in [*inferred.graph.output, *inferred.graph.value_info]}


def _static_types(node: Node, inferred: dict, where: str):
    result = []
    for v in node.outputs:
        t = inferred.get(v.name)
        if t is None or not t.tensor_type.HasField("shape"):
            return None
        dims = t.tensor_type.shape.dim
        if any(not d.HasField("dim_value") for d in dims):
            return None
        result.append((dtypes.from_onnx(t.tensor_type.elem_type, where), tuple(d.dim_value for d in dims)))
    return result
