"""ai.onnx.ml TreeEnsemble (opset 5): each row of X [N, F] walks every tree from its root to a leaf, and the
leaves' weights aggregate per target into Y [N, n_targets] (SUM, AVERAGE, MIN or MAX), then `post_transform`.

The forest is known at build time, so it becomes static tables (mlcc/ops/_trees.py); each leaf has one target
and weight; set-membership nodes (BRANCH_MEMBER) own a slice of the member values, taken in the order such
nodes appear, NaN-delimited. NaN features go where the comparison sends them (false, except for NEQ) unless
nodes_missing_value_tracks_true sends them to the true branch.

Semantics follow the spec; where onnx's reference is silent they follow onnxruntime: a target no tree reaches
stays 0 under MIN and MAX. The post transforms are onnx's ml helpers (SOFTMAX=1, LOGISTIC=2, SOFTMAX_ZERO=3,
PROBIT=4 by the Winitzki inverse erf); the `reference` below computes the same in numpy for folding.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import REQUIRED, Op, register
from ._copy import fill_literal
from ._ml import literals, math_suffix
from ._trees import MEMBER, NEQ, Forest, check_acyclic, lower_tables, tree_report, walk

AGGREGATES = {0: "average", 1: "sum", 2: "min", 3: "max"}
POST_TRANSFORMS = {0: None, 1: "softmax", 2: "logistic", 3: "softmax_zero", 4: "probit"}


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

    true_next = [successor(i, leaf) for i, leaf in zip(per_node["nodes_truenodeids"], per_node["nodes_trueleafs"])]
    false_next = [successor(i, leaf) for i, leaf in zip(per_node["nodes_falsenodeids"], per_node["nodes_falseleafs"])]
    roots = []
    for r in a["tree_roots"]:
        if not 0 <= r < n:
            raise UnsupportedError(f"tree root {r} is not a node", where)
        degenerate = per_node["nodes_trueleafs"][r] and per_node["nodes_falseleafs"][r] and true_next[r] == false_next[r]
        roots.append(true_next[r] if degenerate else r)
    check_acyclic(roots, true_next, false_next, where)

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
    return Forest(per_node["nodes_featureids"], splits, modes, true_next, false_next, nan_true, roots,
                  list(range(len(leaf_target) + 1)), leaf_target, leaf_weight, targets, member_first, member_end,
                  np.asarray(members, dtype))


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
            for leaf in walk(f, row):
                t, w = f.weight_target[leaf], float(f.weight_value[leaf])
                if aggregate in ("sum", "average"):
                    y[r, t] += w
                elif not seen[t] or (w < y[r, t] if aggregate == "min" else w > y[r, t]):
                    y[r, t] = w
                seen[t] = True
            if aggregate == "average":
                y[r] /= len(f.roots)
        return [post_transform(POST_TRANSFORMS[node.attrs["post_transform"]], y).astype(x.dtype)]

    def describe(self, node: Node) -> dict:
        x = node.inputs[0]
        return tree_report(build_forest(node, x.shape[1], x.dtype), x.dtype, x.dtype)

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        f = build_forest(node, x.shape[1], x.dtype)
        aggregate = AGGREGATES[node.attrs["aggregate_function"]]
        c_type = ctx.c_type(x)
        ctx.emit("ops/tree_ensemble.c.j2", kind="regress", x=ctx.ptr(x), x_type=c_type, cmp_type=c_type,
                 rows=x.shape[0], features=x.shape[1], targets=f.targets, trees=len(f.roots),
                 acc=ctx.ptr(y), acc_rows=True, acc_type=c_type, out_type=c_type, y=ctx.ptr(y), base=None,
                 aggregate=aggregate, seen=ctx.scratch(f.targets, "seen", dtype=np.uint8)
                 if aggregate in ("min", "max") else None, post=POST_TRANSFORMS[node.attrs["post_transform"]],
                 fn=math_suffix(x.dtype), lit=literals(x.dtype, probit_infinite=False), trees_lit=fill_literal(len(f.roots), x.dtype),
                 **lower_tables(f, ctx, node.name, x.dtype, x.dtype))


