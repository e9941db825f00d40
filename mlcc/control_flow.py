"""Control flow, compiled away at build time: If, Loop and Scan become plain nodes.

- If with a constant condition is replaced by the branch taken; with a run-time condition both branches are
  compiled and each output is selected with Where (the branches must agree on each output's type). A branch
  that cannot be typed with the built shapes (a Trial that fails) is left out: the other one's outputs pass
  through a BranchGuard, which makes NAME_run return MLCC_ERROR_UNCOMPILED_BRANCH when the condition chooses
  the branch left out, and the frontend warns.
- Loop and Scan are unrolled: the trip count must be known at build time (Loop's M, or a condition that
  folds to a constant each iteration; Scan's length from the scanned inputs' shapes).

Expansion is lazy: an expander returns items for the frontend's work stack, each a NodeProto with its opset
imports or a `Continuation` the frontend calls once everything before it is typed (to read a folded loop
condition or the types a branch produced).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from onnx import AttributeProto, GraphProto, NodeProto, helper, numpy_helper

from . import dtypes
from .errors import NeedsConstantError, ShapeError, UnsupportedError

SYNTHETIC_OPSETS = {"": 17}  # the opset of the helper nodes written here (Unsqueeze/Concat/Where/...)
MAX_UNROLLED_ITERATIONS = 4096


@dataclass
class Continuation:
    run: Callable[[dict], list]  # values by name -> more items


@dataclass
class Trial:
    """Items the frontend types on their own: if any fails, none of them joins the graph and `error` says why."""
    items: list
    error: Exception | None = None


def expanders() -> dict[str, Callable]:
    from . import sequences  # it builds on this module's helpers

    return {"If": expand_if, "Loop": unroll_loop, "Scan": unroll_scan, **sequences.expanders()}


def _attr(proto: NodeProto, name: str, default=None):
    for a in proto.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _node(op_type: str, inputs: list[str], outputs: list[str], name: str, **attrs) -> tuple[NodeProto, dict]:
    return helper.make_node(op_type, inputs, outputs, name=name, **attrs), SYNTHETIC_OPSETS


def _constant(name: str, array: np.ndarray) -> tuple[NodeProto, dict]:
    return _node("Constant", [], [name], f"{name}_const", value=numpy_helper.from_array(np.asarray(array), name))


def inline(graph: GraphProto, prefix: str, bound: dict[str, str], opsets: dict) -> tuple[list, list[str]]:
    """The subgraph's nodes with every name it defines put under `prefix` (its inputs renamed as `bound`
    says); names from enclosing scopes are kept. Returns (items, the subgraph's output names renamed)."""
    renames = dict(bound)
    for init in graph.initializer:
        renames[init.name] = prefix + init.name
    for node in graph.node:
        for out in node.output:
            if out:
                renames[out] = prefix + out
    items = [_constant(renames[init.name], dtypes.tensor_array(init, f"subgraph initializer {init.name!r}")) for init in graph.initializer]
    items += [(_renamed(node, renames, prefix), opsets) for node in graph.node]
    return items, [renames.get(o.name, o.name) for o in graph.output]


def _renamed(node: NodeProto, renames: dict[str, str], prefix: str) -> NodeProto:
    out = NodeProto()
    out.CopyFrom(node)
    out.name = prefix + (node.name or node.op_type)
    del out.input[:]
    del out.output[:]
    out.input.extend(renames.get(n, n) for n in node.input)
    out.output.extend(renames.get(n, n) for n in node.output)
    for attr in out.attribute:  # nested subgraphs read the renamed values of this scope
        for g in [attr.g] if attr.type == AttributeProto.GRAPH else attr.graphs:
            rename_references(g, renames)
    return out


def rename_references(graph: GraphProto, renames: dict[str, str]) -> None:
    local = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {o for n in graph.node for o in n.output}
    outer = {k: v for k, v in renames.items() if k not in local}
    for node in graph.node:
        node.input[:] = [outer.get(n, n) for n in node.input]
        for attr in node.attribute:
            for g in [attr.g] if attr.type == AttributeProto.GRAPH else attr.graphs:
                rename_references(g, outer)
    for o in graph.output:
        if o.name in outer:
            o.name = outer[o.name]


# --- If -----------------------------------------------------------------------------------------
def expand_if(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    cond = values[proto.input[0]]
    then_branch, else_branch = _attr(proto, "then_branch"), _attr(proto, "else_branch")
    if cond.is_const:
        taken = then_branch if bool(np.asarray(cond.data).reshape(-1)[0]) else else_branch
        items, results = inline(taken, prefix, {}, opsets)
        return items + [_node("Identity", [r], [o], f"{prefix}out{i}") for i, (r, o) in enumerate(zip(results, proto.output)) if o]
    then_items, then_results = inline(then_branch, prefix + "then_", {}, opsets)
    else_items, else_results = inline(else_branch, prefix + "else_", {}, opsets)
    then_trial, else_trial = Trial(then_items), Trial(else_items)

    def select(values: dict) -> list:
        scalar = f"{prefix}cond"
        items = [_constant(f"{prefix}scalar_shape", np.zeros(0, np.int64)),
                 _node("Reshape", [proto.input[0], f"{prefix}scalar_shape"], [scalar], f"{prefix}cond_scalar")]
        if then_trial.error is not None and else_trial.error is not None:
            raise then_trial.error
        if then_trial.error is not None or else_trial.error is not None:
            taken, results = (1, then_results) if then_trial.error is None else (0, else_results)
            reason = str(else_trial.error if taken else then_trial.error)
            return items + [(helper.make_node("BranchGuard", [scalar, r], [out], name=f"{prefix}guard{i}", domain="mlcc",
                                              taken=taken, if_node=where, reason=reason), SYNTHETIC_OPSETS)
                            for i, (r, out) in enumerate(zip(results, proto.output)) if out]
        for i, (a, b, out) in enumerate(zip(then_results, else_results, proto.output)):
            if not out:
                continue
            va, vb = values[a], values[b]
            if va.shape != vb.shape or va.dtype != vb.dtype:
                raise UnsupportedError(f"output {out!r} is {va.type_str()} in then_branch but {vb.type_str()} in "
                                       "else_branch; a run-time condition needs both branches to agree", where)
            items.append(_node("Where", [scalar, a, b], [out], f"{prefix}select{i}"))
        return items

    return [then_trial, else_trial, Continuation(select)]


# --- Loop ---------------------------------------------------------------------------------------
def unroll_loop(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    body = _attr(proto, "body")
    inputs = list(proto.input) + [""] * (2 - len(proto.input))
    trip_name, cond_name, carried = inputs[0], inputs[1], inputs[2:]
    trips = None
    if trip_name:
        trip = values[trip_name]
        if not trip.is_const:
            raise NeedsConstantError(f"its trip count {trip_name!r} is computed at run time; mlcc unrolls loops "
                                     "and needs it known at build time", where, trip_name)
        trips = int(np.asarray(trip.data).reshape(-1)[0])
    if cond_name:
        cond = values[cond_name]
        if not cond.is_const:
            raise NeedsConstantError(f"its initial condition {cond_name!r} is computed at run time; mlcc unrolls "
                                     "loops and needs it known at build time", where, cond_name)
        if not bool(np.asarray(cond.data).reshape(-1)[0]):
            trips = 0
    if trips is None and not cond_name:
        raise UnsupportedError("a Loop with neither a trip count nor a condition never ends", where)
    n_carried = len(carried)
    body_inputs = [i.name for i in body.input]
    n_scan = len(body.output) - 1 - n_carried
    scans: list[list[str]] = [[] for _ in range(n_scan)]

    def iteration(i: int, current: list[str], cond_now: str) -> list:
        if (trips is not None and i >= trips) or i >= MAX_UNROLLED_ITERATIONS:
            if trips is None or trips > MAX_UNROLLED_ITERATIONS:
                raise UnsupportedError(f"the loop runs over {MAX_UNROLLED_ITERATIONS} iterations; mlcc unrolls loops", where)
            return finish(current)
        step = f"{prefix}i{i}_"
        bound = {body_inputs[0]: f"{step}iter", body_inputs[1]: cond_now or f"{step}cond_in"}
        bound.update({formal: actual for formal, actual in zip(body_inputs[2:], current)})
        items = [_constant(f"{step}iter", np.array(i, np.int64))]
        if not cond_now:
            items.append(_constant(f"{step}cond_in", np.array(True)))
        body_items, results = inline(body, step, bound, opsets)
        cond_out, carried_out, scan_out = results[0], results[1:1 + n_carried], results[1 + n_carried:]

        def next_step(values: dict) -> list:
            for k, name in enumerate(scan_out):
                scans[k].append(name)
            if cond_name or trips is None:
                cond_value = values[cond_out]
                if not cond_value.is_const:
                    raise UnsupportedError("its condition is computed at run time in the loop body; mlcc unrolls "
                                           "loops and needs every iteration's condition known at build time", where)
                if not bool(np.asarray(cond_value.data).reshape(-1)[0]):
                    return finish(carried_out)
            return iteration(i + 1, carried_out, cond_out if cond_name else "")

        return items + body_items + [Continuation(next_step)]

    def finish(final: list[str]) -> list:
        items = [_node("Identity", [src], [out], f"{prefix}final{k}")
                 for k, (src, out) in enumerate(zip(final, proto.output)) if out]
        for k, out in enumerate(proto.output[n_carried:]):
            if out:
                items += _stack(scans[k], out, 0, f"{prefix}scan{k}_", where)
        return items

    return iteration(0, carried, cond_name)


def _stack(parts: list[str], out: str, axis: int, prefix: str, where: str) -> list:
    """out = the parts stacked along a new `axis` (Unsqueeze each, then Concat)."""
    if not parts:
        raise ShapeError(f"scan output {out!r} would be empty (no iterations); mlcc needs at least one", where)
    axes = f"{prefix}axes"
    items = [_constant(axes, np.array([axis], np.int64))]
    expanded = []
    for j, part in enumerate(parts):
        expanded.append(f"{prefix}{j}")
        items.append(_node("Unsqueeze", [part, axes], [expanded[-1]], f"{prefix}unsqueeze{j}"))
    items.append(_node("Concat", expanded, [out], f"{prefix}concat", axis=axis))
    return items


# --- Scan ---------------------------------------------------------------------------------------
def unroll_scan(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    if opsets.get("", 0) < 9:
        return _batched_scan(proto, opsets, values, prefix, where)
    body = _attr(proto, "body")
    n_scan_in = int(_attr(proto, "num_scan_inputs"))
    n_states = len(proto.input) - n_scan_in
    states, scanned = list(proto.input[:n_states]), list(proto.input[n_states:])
    in_dirs = list(_attr(proto, "scan_input_directions", [0] * n_scan_in))
    in_axes = [a % len(values[s].shape) for a, s in zip(_attr(proto, "scan_input_axes", [0] * n_scan_in), scanned)]
    lengths = {values[s].shape[a] for s, a in zip(scanned, in_axes)}
    if len(lengths) != 1:
        raise ShapeError(f"the scanned inputs disagree on the sequence length: {sorted(lengths)}", where)
    length = lengths.pop()
    if length > MAX_UNROLLED_ITERATIONS:
        raise UnsupportedError(f"the scan runs over {length} iterations, more than {MAX_UNROLLED_ITERATIONS}; mlcc unrolls scans", where)
    n_scan_out = len(body.output) - n_states
    out_dirs = list(_attr(proto, "scan_output_directions", [0] * n_scan_out))
    out_axes = list(_attr(proto, "scan_output_axes", [0] * n_scan_out))
    body_inputs = [i.name for i in body.input]
    items, scans = [], [[] for _ in range(n_scan_out)]
    current = states
    for t in range(length):
        step = f"{prefix}t{t}_"
        bound = dict(zip(body_inputs[:n_states], current))
        for j, (name, axis, reverse) in enumerate(zip(scanned, in_axes, in_dirs)):
            index = f"{step}index{j}"
            items.append(_constant(index, np.array(length - 1 - t if reverse else t, np.int64)))
            items.append(_node("Gather", [name, index], [f"{step}slice{j}"], f"{step}gather{j}", axis=axis))
            bound[body_inputs[n_states + j]] = f"{step}slice{j}"
        body_items, results = inline(body, step, bound, opsets)
        items += body_items
        current = results[:n_states]
        for k, name in enumerate(results[n_states:]):
            scans[k].append(name)
    items += [_node("Identity", [src], [out], f"{prefix}final{k}")
              for k, (src, out) in enumerate(zip(current, proto.output)) if out]

    def stack_outputs(values: dict) -> list:
        more = []
        for k, out in enumerate(proto.output[n_states:]):
            if out:
                rank = len(values[scans[k][0]].shape) + 1 if scans[k] else 1
                parts = scans[k][::-1] if out_dirs[k] else scans[k]
                more += _stack(parts, out, out_axes[k] % rank, f"{prefix}scan{k}_", where)
        return more

    return items + [Continuation(stack_outputs)]


def _batched_scan(proto: NodeProto, opsets: dict, values: dict, prefix: str, where: str) -> list:
    """Scan-8: every input and output has a leading batch axis; each batch item is an opset-9 Scan."""
    lens, rest = proto.input[0], list(proto.input[1:])
    batch = values[rest[0]].shape[0]
    if lens:
        given = values[lens]
        length = values[rest[-1]].shape[1]
        if not given.is_const or any(int(n) != length for n in np.asarray(given.data).reshape(-1)):
            raise UnsupportedError("sequence_lens shorter than the sequence are not supported", where)
    n_scan_in = int(_attr(proto, "num_scan_inputs"))
    directions = list(_attr(proto, "directions", [0] * n_scan_in))
    per_item: list[list[str]] = [[] for _ in proto.output]
    items = []
    for b in range(batch):
        step = f"{prefix}b{b}_"
        index = f"{step}index"
        items.append(_constant(index, np.array(b, np.int64)))
        sliced = []
        for j, name in enumerate(rest):
            sliced.append(f"{step}in{j}")
            items.append(_node("Gather", [name, index], [sliced[-1]], f"{step}gather{j}", axis=0))
        outs = [f"{step}out{k}" for k in range(len(proto.output))]
        for k, out in enumerate(outs):
            per_item[k].append(out)
        scan = helper.make_node("Scan", sliced, outs, name=f"{step}scan", body=_attr(proto, "body"),
                                num_scan_inputs=n_scan_in, scan_input_directions=directions)
        items.append((scan, {**opsets, "": 9}))
    for k, out in enumerate(proto.output):
        if out:
            items += _stack(per_item[k], out, 0, f"{prefix}batch{k}_", where)
    return items
