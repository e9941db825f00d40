"""ai.onnx.ml TreeEnsemble (opset 5): each row of X [N, F] walks every tree from its root to a leaf, and the
leaves' weights aggregate per target into Y [N, n_targets] (SUM, AVERAGE, MIN or MAX), then `post_transform`.

The forest is known at build time, so it becomes static tables: per node its feature, split, mode and two
successors (a node index, or -1 - leaf for a leaf), per leaf its target and weight; set-membership nodes
(BRANCH_MEMBER) own a slice of the member values, taken in the order such nodes appear, NaN-delimited.
The generated C is one small loop walking the tables. NaN features go where the comparison sends them
(false, except for NEQ) unless nodes_missing_value_tracks_true sends them to the true branch.

Semantics follow the spec; where onnx's reference is silent they follow onnxruntime: a target no tree reaches
stays 0 under MIN and MAX. The post transforms are onnx's ml helpers (SOFTMAX=1, LOGISTIC=2, SOFTMAX_ZERO=3,
PROBIT=4 by the Winitzki inverse erf); the `reference` below computes the same in numpy for folding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import REQUIRED, Op, register
from ._copy import fill_literal

AGGREGATES = {0: "average", 1: "sum", 2: "min", 3: "max"}
POST_TRANSFORMS = {0: None, 1: "softmax", 2: "logistic", 3: "softmax_zero", 4: "probit"}
MODE_NAMES = ("LEQ", "LT", "GTE", "GT", "EQ", "NEQ", "MEMBER")
LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
# each mode's test of feature value v against the node's split s, as C (NaN makes all but NEQ false)
TESTS = {LEQ: "v <= s", LT: "v < s", GTE: "v >= s", GT: "v > s", EQ: "v == s", NEQ: "v != s"}
WINITZKI_A = 0.147  # the constant of the inverse-erf approximation onnx's ml helpers use for PROBIT


@dataclass
class Forest:
    feature: list[int]
    split: np.ndarray
    mode: list[int]
    true_next: list[int]  # >= 0: a node; < 0: leaf -1 - next
    false_next: list[int]
    nan_true: list[int]  # NaN goes to the true branch
    member_first: list[int]  # members[first .. end - 1] of a BRANCH_MEMBER node (empty for others)
    member_end: list[int]
    members: np.ndarray
    roots: list[int]  # in the successors' encoding: a tree that is a single leaf has a negative root
    leaf_target: list[int]
    leaf_weight: np.ndarray
    targets: int


def build_forest(node: Node, features: int, dtype) -> Forest:
    a, where = node.attrs, node.where()
    modes = [int(m) for m in np.asarray(a["nodes_modes"]).reshape(-1)]
    n = len(modes)
    per_node = {k: list(a[k]) for k in ("nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids",
                                        "nodes_trueleafs", "nodes_falseleafs")}
    splits = np.asarray(a["nodes_splits"]).reshape(-1).astype(dtype)
    tracks = a.get("nodes_missing_value_tracks_true")
    tracks = [int(t) for t in tracks] if tracks is not None and len(tracks) else [0] * n
    if any(len(v) != n for v in per_node.values()) or len(splits) != n or len(tracks) != n:
        raise UnsupportedError(f"the nodes_* attributes must all have {n} entries", where)
    if any(not 0 <= m <= MEMBER for m in modes):
        raise UnsupportedError("nodes_modes holds a mode outside 0..6", where)
    leaf_target = [int(t) for t in a["leaf_targetids"]]
    targets = int(a.get("n_targets") or max(leaf_target, default=-1) + 1)  # optional: then the leaves tell
    leaf_weight = np.asarray(a["leaf_weights"]).reshape(-1).astype(dtype)
    if len(leaf_weight) != len(leaf_target):
        raise UnsupportedError("leaf_targetids and leaf_weights differ in length", where)
    if targets < 1 or any(not 0 <= t < targets for t in leaf_target):
        raise UnsupportedError(f"n_targets must be positive and every leaf target in 0..{targets - 1}", where)
    if any(not 0 <= f < features for f in per_node["nodes_featureids"]):
        raise UnsupportedError(f"a node reads a feature outside X's {features}", where)

    def successor(index: int, leaf: int) -> int:
        limit = len(leaf_target) if leaf else n
        if not 0 <= index < limit:
            raise UnsupportedError(f"a successor points outside the {'leaves' if leaf else 'nodes'}", where)
        return -1 - index if leaf else index

    true_next = [successor(i, l) for i, l in zip(per_node["nodes_truenodeids"], per_node["nodes_trueleafs"])]
    false_next = [successor(i, l) for i, l in zip(per_node["nodes_falsenodeids"], per_node["nodes_falseleafs"])]
    roots = []
    for r in a["tree_roots"]:
        if not 0 <= r < n:
            raise UnsupportedError(f"tree root {r} is not a node", where)
        degenerate = per_node["nodes_trueleafs"][r] and per_node["nodes_falseleafs"][r] and true_next[r] == false_next[r]
        roots.append(true_next[r] if degenerate else r)
    _check_acyclic(roots, true_next, false_next, where)

    member_first, member_end, members = [0] * n, [0] * n, []
    given = a.get("membership_values")
    given = np.asarray(given).reshape(-1).astype(dtype) if given is not None else np.zeros(0, dtype)
    sets = np.split(given, np.flatnonzero(np.isnan(given)) + 1) if given.size else []
    owners = [k for k, m in enumerate(modes) if m == MEMBER]
    if owners and len(sets) < len(owners):
        raise UnsupportedError(f"{len(owners)} set-membership nodes but {len(sets)} NaN-delimited member sets", where)
    for k, values in zip(owners, sets):
        values = values[~np.isnan(values)]
        member_first[k], member_end[k] = len(members), len(members) + len(values)
        members.extend(values)
    nan_true = [int(bool(t) and m != NEQ) for t, m in zip(tracks, modes)]  # NEQ already sends NaN true
    return Forest(per_node["nodes_featureids"], splits, modes, true_next, false_next, nan_true, member_first,
                  member_end, np.asarray(members, dtype), roots, leaf_target, leaf_weight, targets)


def _check_acyclic(roots, true_next, false_next, where: str) -> None:
    """A tree that loops would never reach a leaf: refuse it at build time."""
    state: dict[int, int] = {}  # 1 on the current path, 2 done
    for root in roots:
        stack = [(root, False)]
        while stack:
            k, leaving = stack.pop()
            if k < 0:
                continue
            if leaving:
                state[k] = 2
                continue
            if state.get(k) == 1:
                raise UnsupportedError(f"the trees are not acyclic (node {k} is its own descendant)", where)
            if state.get(k) == 2:
                continue
            state[k] = 1
            stack += [(k, True), (false_next[k], False), (true_next[k], False)]


def _goes_true(f: Forest, k: int, v) -> bool:
    if np.isnan(v):
        return bool(f.nan_true[k]) or f.mode[k] == NEQ
    if f.mode[k] == MEMBER:
        return bool(np.any(f.members[f.member_first[k]:f.member_end[k]] == v))
    s = f.split[k]
    return {LEQ: v <= s, LT: v < s, GTE: v >= s, GT: v > s, EQ: v == s, NEQ: v != s}[f.mode[k]]


def post_transform(name: str | None, y: np.ndarray) -> np.ndarray:
    """onnx's ml post transforms on each row of y (float64 in, float64 out)."""
    from onnx.reference.ops.aionnxml import _common_classifier as ml

    if name is None:
        return y
    if name == "logistic":
        return ml.logistic(y)
    if name == "probit":
        return ml.probit(y)
    return (ml.softmax if name == "softmax" else ml.softmax_zero)(y.copy())


@register
class TreeEnsemble(Op):
    op_type = "TreeEnsemble"
    domain = "ai.onnx.ml"
    attrs = {"aggregate_function": 1, "leaf_targetids": REQUIRED, "leaf_weights": REQUIRED, "membership_values": None,
             "n_targets": None, "nodes_falseleafs": REQUIRED, "nodes_falsenodeids": REQUIRED,
             "nodes_featureids": REQUIRED, "nodes_hitrates": None, "nodes_missing_value_tracks_true": None,
             "nodes_modes": REQUIRED, "nodes_splits": REQUIRED, "nodes_trueleafs": REQUIRED,
             "nodes_truenodeids": REQUIRED, "post_transform": 0, "tree_roots": REQUIRED}

    def _check(self, node: Node) -> None:
        x = node.inputs[0]
        if x.dtype.kind != "f":
            raise UnsupportedError(f"X of type {x.dtype.name}: floating-point only", node.where())
        if len(x.shape) != 2:
            raise UnsupportedError(f"X must be [N, F], not of rank {len(x.shape)}", node.where())
        if node.attrs["aggregate_function"] not in AGGREGATES:
            raise UnsupportedError(f"aggregate_function {node.attrs['aggregate_function']} is not 0..3", node.where())
        if node.attrs["post_transform"] not in POST_TRANSFORMS:
            raise UnsupportedError(f"post_transform {node.attrs['post_transform']} is not 0..4", node.where())

    def infer(self, node: Node):
        self._check(node)
        x = node.inputs[0]
        return [(x.dtype, (x.shape[0], build_forest(node, x.shape[1], x.dtype).targets))]

    def reference(self, node: Node, inputs):
        x = inputs[0]
        f = build_forest(node, x.shape[1], x.dtype)
        aggregate = AGGREGATES[node.attrs["aggregate_function"]]
        y = np.zeros((x.shape[0], f.targets))
        for r, row in enumerate(x):
            seen = np.zeros(f.targets, bool)
            for k in f.roots:
                while k >= 0:
                    k = f.true_next[k] if _goes_true(f, k, row[f.feature[k]]) else f.false_next[k]
                t, w = f.leaf_target[-1 - k], float(f.leaf_weight[-1 - k])
                if aggregate in ("sum", "average"):
                    y[r, t] += w
                elif not seen[t] or (w < y[r, t] if aggregate == "min" else w > y[r, t]):
                    y[r, t] = w
                seen[t] = True
            if aggregate == "average":
                y[r] /= len(f.roots)
        return [post_transform(POST_TRANSFORMS[node.attrs["post_transform"]], y).astype(x.dtype)]

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        f = build_forest(node, x.shape[1], x.dtype)
        name = node.name
        modes = sorted(set(f.mode))
        tables = dict(
            feature=ctx.static_array("feature", "int32_t", f.feature, f"{len(f.mode)} nodes: feature read"),
            split=ctx.constant(Value(f"{name}_splits", x.dtype, f.split.shape, f.split)),
            mode=ctx.static_array("mode", "uint8_t", f.mode, "0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER")
            if len(modes) > 1 else None,
            true_next=ctx.static_array("true_next", "int32_t", f.true_next, "next node, or -1 - leaf"),
            false_next=ctx.static_array("false_next", "int32_t", f.false_next),
            nan_true=ctx.static_array("nan_true", "uint8_t", f.nan_true, "a NaN feature goes to the true branch")
            if any(f.nan_true) else None,
            roots=ctx.static_array("roots", "int32_t", f.roots, "each tree's first node, or -1 - leaf"),
            leaf_target=ctx.static_array("leaf_target", "int32_t", f.leaf_target, f"{len(f.leaf_target)} leaves"),
            leaf_weight=ctx.constant(Value(f"{name}_leaf_weights", x.dtype, f.leaf_weight.shape, f.leaf_weight)))
        if MEMBER in modes:
            tables.update(
                member_first=ctx.static_array("member_first", "int32_t", f.member_first, "member values first .. end - 1"),
                member_end=ctx.static_array("member_end", "int32_t", f.member_end),
                members=ctx.constant(Value(f"{name}_members", x.dtype, f.members.shape, f.members))
                if f.members.size else None)
        aggregate = AGGREGATES[node.attrs["aggregate_function"]]
        seen = ctx.scratch(f.targets, "seen", dtype=np.uint8) if aggregate in ("min", "max") else None
        lit = {v: fill_literal(v, x.dtype) for v in (0.0, 0.5, 1.0, 2.0, 1e-7, 2.0 / (np.pi * WINITZKI_A),
                                                     1.0 / WINITZKI_A, 1.41421356)}
        ctx.emit("ops/tree_ensemble.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), rows=x.shape[0], features=x.shape[1],
                 targets=f.targets, trees=len(f.roots), c_type=ctx.c_type(x), fn="f" if x.dtype == np.float32 else "",
                 tests=[(m, MODE_NAMES[m], TESTS.get(m)) for m in modes], aggregate=aggregate, seen=seen,
                 post=POST_TRANSFORMS[node.attrs["post_transform"]], trees_lit=fill_literal(len(f.roots), x.dtype),
                 zero=lit[0.0], half=lit[0.5], one=lit[1.0], two=lit[2.0], tiny=lit[1e-7], sqrt2=lit[1.41421356],
                 winitzki=(lit[2.0 / (np.pi * WINITZKI_A)], lit[1.0 / WINITZKI_A]), **tables)
