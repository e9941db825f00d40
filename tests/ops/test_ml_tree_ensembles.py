"""Golden tests of ai.onnx.ml TreeEnsembleRegressor and TreeEnsembleClassifier (v1 and v3) against onnxruntime,
on every target: each node mode with missing-value tracks, each aggregate and post transform, the splits and
weights as double tensors (v3), integer features, and onnxruntime's several readings of two classes."""

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tests.golden import check_model, node_model

ML = "ai.onnx.ml"
MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]


def forest(prefix, trees=3, depth=3, features=4, targets=2, modes=MODES, seed=0, tracks=True, per_leaf=1,
           weights=(-5, 5)) -> dict:
    """v1 attributes of `trees` complete binary trees of `depth` levels over integer-valued splits, listed root
    first with shuffled node ids; each leaf gets `per_leaf` weights for distinct random targets."""
    rng = np.random.default_rng(seed)
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true",
                         f"{prefix}_treeids", f"{prefix}_nodeids", f"{prefix}_ids", f"{prefix}_weights")}
    size = 2 ** (depth + 1) - 1
    for t in range(trees):
        ids = [0, *rng.permutation(np.arange(1, size)).tolist()]  # heap position -> node id
        for i in range(size):
            leaf = i >= size // 2
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(ids[i])
            a["nodes_featureids"].append(0 if leaf else int(rng.integers(0, features)))
            a["nodes_modes"].append("LEAF" if leaf else str(rng.choice(modes)))
            a["nodes_values"].append(0.0 if leaf else float(rng.integers(-2, 3)))
            a["nodes_truenodeids"].append(0 if leaf else ids[2 * i + 1])
            a["nodes_falsenodeids"].append(0 if leaf else ids[2 * i + 2])
            a["nodes_missing_value_tracks_true"].append(int(tracks and not leaf and rng.integers(0, 2)))
            if leaf:
                for target in rng.choice(targets, per_leaf, replace=False):
                    a[f"{prefix}_treeids"].append(t)
                    a[f"{prefix}_nodeids"].append(ids[i])
                    a[f"{prefix}_ids"].append(int(target))
                    a[f"{prefix}_weights"].append(float(rng.uniform(*weights)))
    return a


def as_tensors(a: dict, dtype=np.float64) -> dict:
    """The v3 spelling: the float lists as tensors of `dtype`."""
    a = dict(a)
    for name in ("nodes_values", "class_weights", "target_weights", "base_values"):
        if name in a:
            a[f"{name}_as_tensor"] = numpy_helper.from_array(np.asarray(a.pop(name), dtype), f"{name}_as_tensor")
    return a


def features(rows=16, columns=4, dtype=np.float32, seed=3) -> np.ndarray:
    x = np.random.default_rng(seed).integers(-3, 4, (rows, columns)).astype(dtype)
    if dtype(0).dtype.kind == "f":
        x[::5, 1] = np.nan
        x[2::7, 0] = np.nan
    return x


def model(op, attrs, x, opset) -> onnx.ModelProto:
    rows = x.shape[0]
    if op == "TreeEnsembleClassifier":
        outputs = {"y": (np.int64, (rows,)), "z": (np.float32, (rows, len(attrs["classlabels_int64s"])))}
    else:
        outputs = {"y": (np.float32, (rows, attrs.get("n_targets", 1)))}
    m = node_model(op, {"x": x}, outputs, attrs, opset=opset, domain=ML)
    m.opset_import.append(onnx.helper.make_opsetid("", 17))
    return m


@pytest.mark.parametrize("aggregate,post,targets", [
    ("SUM", "NONE", 1), ("AVERAGE", "SOFTMAX", 3), ("MIN", "LOGISTIC", 3), ("MAX", "SOFTMAX_ZERO", 3),
    ("SUM", "PROBIT", 1),
])
def test_regressor_aggregate_post_transform(aggregate, post, targets, target, tmp_path):
    x = features()
    weights = (0.05, 0.3) if post == "PROBIT" else (-5, 5)  # probit takes probabilities
    attrs = {**forest("target", trees=4, targets=targets, seed=len(aggregate), weights=weights),
             "n_targets": targets, "aggregate_function": aggregate, "post_transform": post,
             "base_values": [0.25 * (t + 1) for t in range(targets)]}
    check_model(model("TreeEnsembleRegressor", attrs, x, 1), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("modes", [MODES[0:2], MODES[2:4], MODES[4:6], MODES[3:4]])
def test_regressor_mode_missing_tracks(modes, target, tmp_path):
    x = features()
    attrs = {**forest("target", trees=2, depth=4, modes=modes, seed=len(modes[0]), per_leaf=2), "n_targets": 2}
    report = check_model(model("TreeEnsembleRegressor", attrs, x, 1), {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)
    # the forest is tables: 2 trees of 15 branch nodes, a float split, a byte feature, byte successors,
    # a mode byte when modes mix and a missing-value byte
    step = next(s for s in report["steps"] if s["op"] == "TreeEnsembleRegressor")
    assert (step["trees"], step["branch_nodes"], step["leaves"]) == (2, 30, 32)
    assert step["bytes_per_node"] == 4 + 1 + 2 + (len(modes) > 1) + 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_regressor_v3_tensors(dtype, target, tmp_path):
    # splits between float32 values: double X compares in double, where they part rows float would not
    x = features(dtype=dtype) + dtype(np.float32(1 / 3))
    attrs = forest("target", trees=3, targets=2, seed=5, per_leaf=2)
    attrs["nodes_values"] = [v + 1 / 3 for v in attrs["nodes_values"]]
    attrs = {**as_tensors(attrs, dtype), "n_targets": 2, "aggregate_function": "AVERAGE"}
    check_model(model("TreeEnsembleRegressor", attrs, x, 3), {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("post,per_leaf,v3", [("NONE", 3, False), ("SOFTMAX", 1, True), ("LOGISTIC", 2, False),
                                              ("SOFTMAX_ZERO", 1, False)])
def test_classifier_multiclass(post, per_leaf, v3, target, tmp_path):
    dtype = np.float64 if v3 else np.float32
    x = features(dtype=dtype)
    attrs = {**forest("class", trees=3, targets=3, seed=11, per_leaf=per_leaf), "post_transform": post,
             "classlabels_int64s": [4, -1, 9], "base_values": [0.5, -0.5, 1.0]}
    check_model(model("TreeEnsembleClassifier", as_tensors(attrs, dtype) if v3 else attrs, x, 3 if v3 else 1), {"x": x},
                target, tmp_path, rtol=1e-5, atol=1e-6)


# two classes: which classes the weights name, their signs, how many base_values, and the post transform
@pytest.mark.parametrize("classes,weights,bases,post", [
    ([0], (0.0, 0.4), 0, "NONE"),  # a random forest's probabilities of the positive class
    ([0], (-1.0, 1.0), 1, "LOGISTIC"),  # gradient boosting's margins
    ([1], (-1.0, 1.0), 2, "NONE"),
    ([0], (-1.0, 1.0), 2, "PROBIT"),  # (one score under PROBIT leaves onnxruntime's second unwritten)
    ([0, 1], (0.0, 0.5), 0, "NONE"),
    ([0, 1], (-1.0, 1.0), 2, "SOFTMAX"),
    ([1], (0.0, 0.5), 1, "NONE"),
])
def test_classifier_two_classes(classes, weights, bases, post, target, tmp_path):
    x = features()
    attrs = forest("class", trees=3, targets=len(classes), seed=13, weights=weights)
    attrs["class_ids"] = [classes[i] for i in attrs["class_ids"]]
    attrs.update(post_transform=post, classlabels_int64s=[7, 3])
    if bases:
        attrs["base_values"] = [0.2, -0.3][:bases]
    if post == "PROBIT":
        attrs["class_weights"] = [w / 20 + 0.15 for w in attrs["class_weights"]]  # sums in (0, 1)
    check_model(model("TreeEnsembleClassifier", attrs, x, 1), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-6)


def test_classifier_int_features_leaf_root(target, tmp_path):
    # int32 features; the second tree is a single leaf
    x = features(dtype=np.int32)
    attrs = forest("class", trees=2, targets=3, seed=17, per_leaf=3)
    attrs["nodes_treeids"].append(2)
    attrs["nodes_nodeids"].append(0)
    for k, v in (("nodes_featureids", 0), ("nodes_modes", "LEAF"), ("nodes_values", 0.0), ("nodes_truenodeids", 0),
                 ("nodes_falsenodeids", 0), ("nodes_missing_value_tracks_true", 0)):
        attrs[k].append(v)
    for k, v in (("class_treeids", 2), ("class_nodeids", 0), ("class_ids", 1), ("class_weights", 0.75)):
        attrs[k].append(v)
    attrs["classlabels_int64s"] = [0, 1, 2]
    check_model(model("TreeEnsembleClassifier", attrs, x, 1), {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)
