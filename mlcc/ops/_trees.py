"""The forest behind ai.onnx.ml's tree ops (TreeEnsemble v5, TreeEnsembleClassifier and TreeEnsembleRegressor
v1/v3): build-time tables and the lowering that walks them.

A forest is static tables: per branch node its feature, split, mode and two successors (a branch node's index,
or -1 - leaf for a leaf), per leaf a range of (target, weight) pairs. Index tables take the narrowest integer
type that holds them, so a float forest costs about 10 bytes per branch node. The generated C is one small loop
per tree walking the tables (no unrolled if-trees); the op that owns the forest adds how the leaves' weights
become its outputs (templates/ops/tree_ensemble.c.j2).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedError
from ..ir import Value

LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
MODE_NAMES = ("LEQ", "LT", "GTE", "GT", "EQ", "NEQ", "MEMBER")
# each mode's test of feature value v against the node's split s, as C (NaN makes all but NEQ false)
TESTS = {LEQ: "v <= s", LT: "v < s", GTE: "v >= s", GT: "v > s", EQ: "v == s", NEQ: "v != s"}
WINITZKI_A = 0.147  # the constant of the inverse-erf approximation the ml post transform PROBIT uses


@dataclass
class Forest:
    feature: list[int]  # per branch node
    split: np.ndarray
    mode: list[int]
    true_next: list[int]  # >= 0: a branch node; < 0: leaf -1 - next
    false_next: list[int]
    nan_true: list[int]  # a NaN feature goes to the true branch
    roots: list[int]  # in the successors' encoding: a tree that is a single leaf has a negative root
    leaf_first: list[int]  # leaf l's weights are weight_target/weight_value[leaf_first[l] .. leaf_first[l + 1] - 1]
    weight_target: list[int]
    weight_value: np.ndarray
    targets: int
    member_first: list[int] = field(default_factory=list)  # BRANCH_MEMBER nodes' member values (v5 only)
    member_end: list[int] = field(default_factory=list)
    members: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

    @property
    def leaves(self) -> int:
        return len(self.leaf_first) - 1

    def layout(self) -> str:
        """How leaves hold weights: "one" each, all targets in order ("dense"), or any ("ranges")."""
        counts = np.diff(self.leaf_first)
        if np.all(counts == 1):
            return "one"
        dense = np.tile(np.arange(self.targets), self.leaves).tolist()
        return "dense" if np.all(counts == self.targets) and self.weight_target == dense else "ranges"

    def always_scored(self) -> list[bool]:
        """Per target: does every row get a weight for it (some tree has it in every leaf)?"""
        scored = [False] * self.targets
        for root in self.roots:
            leaves, stack = set(), [root]
            while stack:
                k = stack.pop()
                if k < 0:
                    leaves.add(-1 - k)
                else:
                    stack += [self.true_next[k], self.false_next[k]]
            common = None
            for leaf in leaves:
                mine = set(self.weight_target[self.leaf_first[leaf]:self.leaf_first[leaf + 1]])
                common = mine if common is None else common & mine
            for t in common or ():
                scored[t] = True
        return scored


def check_acyclic(roots, true_next, false_next, where: str) -> None:
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


def goes_true(f: Forest, k: int, v) -> bool:
    if np.isnan(v):
        return bool(f.nan_true[k]) or f.mode[k] == NEQ
    if f.mode[k] == MEMBER:
        return bool(np.any(f.members[f.member_first[k]:f.member_end[k]] == v))
    s = f.split[k]
    return {LEQ: v <= s, LT: v < s, GTE: v >= s, GT: v > s, EQ: v == s, NEQ: v != s}[f.mode[k]]


def walk(f: Forest, row) -> list[int]:
    """The leaf each tree sends `row` to."""
    leaves = []
    for k in f.roots:
        while k >= 0:
            k = f.true_next[k] if goes_true(f, k, row[f.feature[k]]) else f.false_next[k]
        leaves.append(-1 - k)
    return leaves


def _index_type(values, signed: bool = True) -> str:
    low, high = (min(values), max(values)) if len(values) else (0, 0)
    for bits in (8, 16, 32):
        if signed and -(1 << (bits - 1)) <= low and high < 1 << (bits - 1):
            return f"int{bits}_t"
        if not signed and 0 <= low and high < 1 << bits:
            return f"uint{bits}_t"
    return "int64_t" if signed else "uint64_t"


def _types(f: Forest) -> tuple[str, str]:
    """The C types of the successor and feature tables."""
    return _index_type([*f.true_next, *f.false_next, *f.roots, -1]), _index_type(f.feature or [0], signed=False)


def lower_tables(f: Forest, ctx, name: str, split_dtype, weight_dtype) -> dict:
    """The forest's tables as read-only arrays: their identifiers, the leaf layout and the node tests."""
    nodes = len(f.mode)
    modes = sorted(set(f.mode))
    split = f.split.astype(split_dtype)
    weights = f.weight_value.astype(weight_dtype)
    next_type, feature_type = _types(f)
    tables = dict(
        feature=ctx.static_array("feature", feature_type, f.feature or [0], f"{nodes} branch nodes: the feature read"),
        split=ctx.constant(Value(f"{name}_splits", split.dtype, split.shape, split)) if nodes else None,
        mode=ctx.static_array("mode", "uint8_t", f.mode, "0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER")
        if len(modes) > 1 else None,
        true_next=ctx.static_array("true_next", next_type, f.true_next or [0], "next node, or -1 - leaf"),
        false_next=ctx.static_array("false_next", next_type, f.false_next or [0]),
        nan_true=ctx.static_array("nan_true", "uint8_t", f.nan_true, "a NaN feature goes to the true branch")
        if any(f.nan_true) else None,
        roots=ctx.static_array("roots", next_type, f.roots, "each tree's first node, or -1 - leaf"),
        leaf_weight=ctx.constant(Value(f"{name}_leaf_weights", weights.dtype, weights.shape, weights)),
        leaf_first=None, weight_target=None, target_const=0, members=None, member_first=None, member_end=None)
    layout = f.layout()
    if layout == "ranges":
        tables["leaf_first"] = ctx.static_array("leaf_first", _index_type(f.leaf_first, signed=False), f.leaf_first,
                                                f"{f.leaves} leaves: weights first .. next leaf's first - 1")
    if layout != "dense" and len(set(f.weight_target)) <= 1:
        tables["target_const"] = f.weight_target[0] if f.weight_target else 0  # every weight adds to one target
    elif layout != "dense":
        tables["weight_target"] = ctx.static_array("weight_target", _index_type(f.weight_target, signed=False),
                                                   f.weight_target, "the target each leaf weight adds to")
    if MEMBER in modes:
        tables.update(
            member_first=ctx.static_array("member_first", "int32_t", f.member_first, "member values first .. end - 1"),
            member_end=ctx.static_array("member_end", "int32_t", f.member_end),
            members=ctx.constant(Value(f"{name}_members", split.dtype, f.members.shape, f.members.astype(split.dtype)))
            if f.members.size else None)
    return dict(tables, layout=layout, tests=[(m, MODE_NAMES[m], TESTS.get(m)) for m in modes])


def _bytes(c_type: str) -> int:
    return int(c_type.removeprefix("u").removeprefix("int").removesuffix("_t")) // 8  # uint8_t -> 1


def tree_report(f: Forest, split_dtype, weight_dtype) -> dict:
    """What report.json says of a forest: its size and the read-only bytes each branch node takes."""
    next_type, feature_type = _types(f)
    per_node = (np.dtype(split_dtype).itemsize + _bytes(feature_type) + 2 * _bytes(next_type)
                + (len(set(f.mode)) > 1) + any(f.nan_true))
    return {"trees": len(f.roots), "branch_nodes": len(f.mode), "leaves": f.leaves, "bytes_per_node": int(per_node),
            "leaf_weight_bytes": int(f.weight_value.size * np.dtype(weight_dtype).itemsize)}


# --- TreeEnsembleClassifier / TreeEnsembleRegressor (v1, v3): nodes and leaves named by (tree id, node id) -----
V3_MODES = {"BRANCH_LEQ": LEQ, "BRANCH_LT": LT, "BRANCH_GTE": GTE, "BRANCH_GT": GT, "BRANCH_EQ": EQ, "BRANCH_NEQ": NEQ}
V3_NODE_ATTRS = {"nodes_falsenodeids": None, "nodes_featureids": None, "nodes_hitrates": None,
                 "nodes_hitrates_as_tensor": None, "nodes_missing_value_tracks_true": None, "nodes_modes": None,
                 "nodes_nodeids": None, "nodes_treeids": None, "nodes_truenodeids": None, "nodes_values": None,
                 "nodes_values_as_tensor": None, "post_transform": "NONE", "base_values": None,
                 "base_values_as_tensor": None}


def _as_tensor(a: dict, name: str):
    tensor = a.get(f"{name}_as_tensor")
    if tensor is not None:
        return np.asarray(tensor).reshape(-1)
    return np.asarray(a.get(name) or [], np.float32).reshape(-1)


def threshold_dtype(x) -> np.dtype:
    """The type splits compare in and scores accumulate in, as onnxruntime: double for double X, else float."""
    return np.dtype(np.float64 if x.dtype == np.float64 else np.float32)


def build_forest_v3(node, features: int, prefix: str, targets: int) -> Forest:
    """The forest of a TreeEnsembleClassifier (prefix "class") or TreeEnsembleRegressor ("target")."""
    a, where = node.attrs, node.where()
    modes = [m.decode() if isinstance(m, bytes) else m for m in a.get("nodes_modes") or []]
    n = len(modes)
    ids = {k: [int(v) for v in a.get(k) or []] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids",
                                                          "nodes_truenodeids", "nodes_falsenodeids")}
    splits = _as_tensor(a, "nodes_values")
    tracks = [int(t) for t in a.get("nodes_missing_value_tracks_true") or []] or [0] * n
    if any(len(v) != n for v in ids.values()) or len(splits) != n or len(tracks) != n:
        raise UnsupportedError(f"the nodes_* attributes must all have {n} entries", where)
    unknown = sorted({m for m in modes if m != "LEAF" and m not in V3_MODES})
    if unknown:
        raise UnsupportedError(f"unknown node mode(s) {', '.join(unknown)}", where)
    index = {}
    for i, key in enumerate(zip(ids["nodes_treeids"], ids["nodes_nodeids"])):
        if key in index:
            raise UnsupportedError(f"tree {key[0]} has node id {key[1]} twice", where)
        index[key] = i
    leaf_of, branch_of = {}, {}  # node position -> leaf number / branch number
    for i, m in enumerate(modes):
        (leaf_of if m == "LEAF" else branch_of)[i] = len(leaf_of if m == "LEAF" else branch_of)

    def successor(tree: int, node_id: int) -> int:
        i = index.get((tree, node_id))
        if i is None:
            raise UnsupportedError(f"tree {tree}: a successor names node id {node_id}, which it does not have", where)
        return -1 - leaf_of[i] if i in leaf_of else branch_of[i]

    branches = sorted(branch_of, key=branch_of.get)
    feature = [ids["nodes_featureids"][i] for i in branches]
    if any(not 0 <= f < features for f in feature):
        raise UnsupportedError(f"a node reads a feature outside X's {features}", where)
    true_next = [successor(ids["nodes_treeids"][i], ids["nodes_truenodeids"][i]) for i in branches]
    false_next = [successor(ids["nodes_treeids"][i], ids["nodes_falsenodeids"][i]) for i in branches]
    mode = [V3_MODES[modes[i]] for i in branches]
    roots, seen_trees = [], set()
    for i, tree in enumerate(ids["nodes_treeids"]):  # onnxruntime: a tree's root is its first node listed
        if tree not in seen_trees:
            seen_trees.add(tree)
            roots.append(-1 - leaf_of[i] if i in leaf_of else branch_of[i])
    check_acyclic(roots, true_next, false_next, where)

    w_trees, w_nodes, w_ids = ([int(v) for v in a.get(f"{prefix}_{k}") or []] for k in ("treeids", "nodeids", "ids"))
    w_values = _as_tensor(a, f"{prefix}_weights")
    if not len(w_trees) == len(w_nodes) == len(w_ids) == len(w_values):
        raise UnsupportedError(f"the {prefix}_* attributes differ in length", where)
    if any(not 0 <= t < targets for t in w_ids):
        raise UnsupportedError(f"{prefix}_ids must lie in 0..{targets - 1}", where)
    per_leaf: list[list[int]] = [[] for _ in leaf_of]
    for j, key in enumerate(zip(w_trees, w_nodes)):
        i = index.get(key)
        if i is None or i not in leaf_of:
            raise UnsupportedError(f"a weight is given to tree {key[0]} node {key[1]}, which is not a leaf", where)
        per_leaf[leaf_of[i]].append(j)
    order = [j for weights in per_leaf for j in weights]
    leaf_first = np.concatenate([[0], np.cumsum([len(w) for w in per_leaf])]).astype(int).tolist()
    return Forest(feature, np.asarray(splits[branches]), mode, true_next, false_next,
                  [int(bool(tracks[i]) and mode[b] != NEQ) for b, i in enumerate(branches)], roots, leaf_first,
                  [w_ids[j] for j in order], np.asarray(w_values[order]), targets)
