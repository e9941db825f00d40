"""Golden tests of the ML ops: TfIdfVectorizer and ai.onnx.ml TreeEnsemble and ArrayFeatureExtractor, on every
target, against onnxruntime. TreeEnsemble's post transforms are checked against onnxruntime's raw scores put
through onnx's ml helpers: onnxruntime numbers them off the spec (1 as LOGISTIC, 2 as SOFTMAX) and skips most
of them for a single target."""

import numpy as np
import onnx
import pytest
from onnx import numpy_helper
from onnx.reference.ops.aionnxml import _common_classifier as ml

from mlcc.errors import UnsupportedError
from mlcc.verify import reference_outputs
from tests.golden import build_and_run, check_model, node_model, rand
from tests.ops.test_ml_tree_ensembles import features

EXACT = {"rtol": 0.0, "atol": 0.0}
ML = "ai.onnx.ml"


# --- TfIdfVectorizer ------------------------------------------------------------------------------
# unigrams 2 3 5 4, bigrams (5 6) (7 8) (6 7), trigrams (5 6 7) (2 3 5), in shuffled columns; weights[i] is
# the i-th n-gram's (spec and onnxruntime; onnx's reference would read weights[column]).
POOL = {"pool_int64s": [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6, 7, 2, 3, 5], "ngram_counts": [0, 4, 10],
        "ngram_indexes": [8, 0, 3, 1, 2, 6, 4, 5, 7]}
GAPPED = [8, 0, 3, 1, 2, 10, 4, 5, 7]  # columns 6 and 9 count nothing
TOKENS = np.array([[2, 3, 5, 6, 7, 8, 5, 6, 7, 4, 2, 3, 5, 5, 6], [7, 8, 6, 7, 1, 5, 9, 6, 2, 4, 3, 5, 6, 7, 7]])


@pytest.mark.parametrize("mode,grams,skip,weighted", [
    ("TF", (1, 1), 0, False),
    ("TF", (2, 2), 0, "gapped"),
    ("TF", (1, 3), 2, False),
    ("IDF", (1, 2), 1, False),
    ("IDF", (2, 3), 3, True),
    ("TFIDF", (1, 3), 4, True),
    ("TFIDF", (3, 3), 1, False),
])
@pytest.mark.parametrize("shape,dtype", [((2, 15), np.int64), ((15,), np.int32)])
def test_tf_idf_vectorizer(mode, grams, skip, weighted, shape, dtype, target, tmp_path):
    x = TOKENS.reshape(-1)[:np.prod(shape)].reshape(shape).astype(dtype)
    attrs = {"mode": mode, "min_gram_length": grams[0], "max_gram_length": grams[1], "max_skip_count": skip, **POOL}
    if weighted == "gapped":
        attrs["ngram_indexes"] = GAPPED
    elif weighted:
        attrs["weights"] = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0, 2.5]
    model = node_model("TfIdfVectorizer", {"x": x}, ["y"], attrs, opset=9)
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-6, atol=0.0)


def test_tf_idf_vectorizer_folded(target, tmp_path):
    # a constant input folds through the op's numpy reference, which must agree with onnxruntime too
    attrs = {"mode": "TFIDF", "min_gram_length": 1, "max_gram_length": 3, "max_skip_count": 2, **POOL,
             "weights": [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0, 2.5]}
    model = node_model("TfIdfVectorizer", {}, ["y"], attrs, opset=9, initializers={"x": TOKENS})
    check_model(model, {}, target, tmp_path, rtol=1e-6, atol=0.0)


def test_tf_idf_vectorizer_string_pool_unsupported(tmp_path):
    x = np.array([1, 2], np.int64)
    model = node_model("TfIdfVectorizer", {"x": x}, {"y": (np.float32, (2,))},
                       {"mode": "TF", "min_gram_length": 1, "max_gram_length": 1, "max_skip_count": 0,
                        "ngram_counts": [0], "ngram_indexes": [0, 1], "pool_strings": ["a", "b"]}, opset=9)
    with pytest.raises(UnsupportedError, match="string pools"):
        build_and_run(model, {"x": x}, "host", tmp_path)


# --- TreeEnsemble ---------------------------------------------------------------------------------
def complete_trees(rng: np.random.Generator, trees: int, depth: int, features: int, targets: int) -> dict:
    """TreeEnsemble's structure attributes of `trees` complete binary trees of `depth` levels (the nodes in
    heap order, tree after tree): each node's feature and each leaf's target random."""
    inner, leaves = 2 ** depth - 1, 2 ** depth
    attrs = {k: [] for k in ("nodes_featureids", "nodes_truenodeids", "nodes_falsenodeids", "nodes_trueleafs",
                             "nodes_falseleafs", "tree_roots", "leaf_targetids")}
    for t in range(trees):
        attrs["tree_roots"].append(t * inner)
        for i in range(inner):
            for side, child in (("true", 2 * i + 1), ("false", 2 * i + 2)):
                leaf = child >= inner
                attrs[f"nodes_{side}leafs"].append(int(leaf))
                attrs[f"nodes_{side}nodeids"].append(t * leaves + child - inner if leaf else t * inner + child)
        attrs["nodes_featureids"] += rng.integers(0, features, inner).tolist()
        attrs["leaf_targetids"] += rng.integers(0, targets, leaves).tolist()
    return attrs


def forest(trees=3, depth=3, features=4, targets=2, modes=(0, 1, 2, 3, 4, 5), seed=0, dtype=np.float32,
           tracks=False) -> dict:
    """Attributes of `trees` complete binary trees of `depth` levels over integer-valued splits."""
    rng = np.random.default_rng(seed)
    attrs = complete_trees(rng, trees, depth, features, targets)
    n, leaves = trees * (2 ** depth - 1), 2 ** depth
    attrs.update(
        n_targets=targets,
        nodes_modes=numpy_helper.from_array(rng.choice(modes, n).astype(np.uint8), "nodes_modes"),
        nodes_splits=numpy_helper.from_array(rng.integers(-2, 3, n).astype(dtype), "nodes_splits"),
        leaf_weights=numpy_helper.from_array(rng.uniform(-5, 5, trees * leaves).astype(dtype), "leaf_weights"))
    if tracks:
        attrs["nodes_missing_value_tracks_true"] = rng.integers(0, 2, n).tolist()
    return attrs


def tree_model(attrs, x) -> onnx.ModelProto:
    return node_model("TreeEnsemble", {"x": x}, ["y"], attrs, opset=5, domain=ML)


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tree_ensemble_aggregates(aggregate, dtype, target, tmp_path):
    # 4 trees over 3 targets: some rows leave a target unreached (stays 0 under MIN/MAX, as onnxruntime)
    x = features(dtype=dtype)
    attrs = {**forest(trees=4, targets=3, seed=aggregate, dtype=dtype), "aggregate_function": aggregate}
    check_model(tree_model(attrs, x), {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", [0, 1, 2, 3, 4, 5])
def test_tree_ensemble_single_mode_missing_tracks_true(mode, target, tmp_path):
    x = features()
    attrs = forest(trees=2, depth=4, modes=(mode,), seed=10 + mode, tracks=True)
    check_model(tree_model(attrs, x), {"x": x}, target, tmp_path, rtol=1e-6, atol=1e-6)


def test_tree_ensemble_set_membership(target, tmp_path):
    # node 0: x0 <= 1; node 1: x1 in {-2, 0, 3}; node 2: x0 in {2} (NaN tracks true); node 3 (tree 2): x1 in {1}
    x = features()
    attrs = {
        "nodes_featureids": [0, 1, 0, 1], "nodes_truenodeids": [1, 0, 2, 4], "nodes_trueleafs": [0, 1, 1, 1],
        "nodes_falsenodeids": [2, 1, 3, 5], "nodes_falseleafs": [0, 1, 1, 1], "tree_roots": [0, 3],
        "nodes_modes": numpy_helper.from_array(np.array([0, 6, 6, 6], np.uint8), "nodes_modes"),
        "nodes_splits": numpy_helper.from_array(np.array([1, np.nan, np.nan, np.nan], np.float32), "nodes_splits"),
        "membership_values": numpy_helper.from_array(np.array([-2, 0, 3, np.nan, 2, np.nan, 1, np.nan], np.float32),
                                                     "membership_values"),
        "nodes_missing_value_tracks_true": [0, 0, 1, 0],
        "leaf_targetids": [0, 1, 0, 1, 1, 0], "n_targets": 2,
        "leaf_weights": numpy_helper.from_array(np.array([1, 10, 100, 1000, 2, 20], np.float32), "leaf_weights")}
    check_model(tree_model(attrs, x), {"x": x}, target, tmp_path, **EXACT)


def test_tree_ensemble_leaf_root(target, tmp_path):
    # the second tree is a single leaf: its root node's two successors are the same leaf
    x = features(rows=5)
    attrs = {"nodes_featureids": [2, 0], "nodes_truenodeids": [0, 2], "nodes_trueleafs": [1, 1],
             "nodes_falsenodeids": [1, 2], "nodes_falseleafs": [1, 1], "tree_roots": [0, 1],
             "nodes_modes": numpy_helper.from_array(np.zeros(2, np.uint8), "nodes_modes"),
             "nodes_splits": numpy_helper.from_array(np.array([0.5, 0], np.float32), "nodes_splits"),
             "leaf_targetids": [0, 0, 0], "n_targets": 1,
             "leaf_weights": numpy_helper.from_array(np.array([-1, 1, 7], np.float32), "leaf_weights")}
    check_model(tree_model(attrs, x), {"x": x}, target, tmp_path, **EXACT)


POST = {1: ml.softmax, 2: ml.logistic, 3: ml.softmax_zero, 4: ml.probit}


@pytest.mark.parametrize("post", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tree_ensemble_post_transform(post, dtype, target, tmp_path):
    x = features(dtype=dtype)
    attrs = forest(trees=3, targets=3, seed=7, dtype=dtype)
    if post == 4:  # probit takes probabilities: shrink the scores into (0, 1)
        weights = numpy_helper.to_array(attrs["leaf_weights"]) / 40 + 1 / 6
        attrs["leaf_weights"] = numpy_helper.from_array(weights.astype(dtype), "leaf_weights")
    raw, _ = reference_outputs(tree_model(attrs, x), {"x": x}, ["y"])
    expected = np.asarray(POST[post](raw["y"].astype(np.float64).copy())).astype(dtype)
    check_model(tree_model({**attrs, "post_transform": post}, x), {"x": x}, target, tmp_path,
                expected={"y": expected}, rtol=1e-5, atol=1e-6)


def test_tree_ensemble_cycle_unsupported(tmp_path):
    x = features(rows=2)
    attrs = {"nodes_featureids": [0, 0], "nodes_truenodeids": [1, 0], "nodes_trueleafs": [0, 0],
             "nodes_falsenodeids": [0, 0], "nodes_falseleafs": [1, 1], "tree_roots": [0],
             "nodes_modes": numpy_helper.from_array(np.zeros(2, np.uint8), "nodes_modes"),
             "nodes_splits": numpy_helper.from_array(np.zeros(2, np.float32), "nodes_splits"),
             "leaf_targetids": [0], "n_targets": 1,
             "leaf_weights": numpy_helper.from_array(np.ones(1, np.float32), "leaf_weights")}
    model = node_model("TreeEnsemble", {"x": x}, {"y": (np.float32, (2, 1))}, attrs, opset=5, domain=ML)
    with pytest.raises(UnsupportedError, match="acyclic"):
        build_and_run(model, {"x": x}, "host", tmp_path)


# --- ArrayFeatureExtractor --------------------------------------------------------------------------
@pytest.mark.parametrize("shape,indices,constant", [
    ((3, 5), [4, 0, 2], False),
    ((3, 5), [1, 2, 3], True),  # a strided copy
    ((6,), [5, 1], False),
    ((2, 3, 4), [[3, 0], [0, 1]], True),  # any shape of indices, flattened
])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_array_feature_extractor(shape, indices, constant, dtype, target, tmp_path):
    x = (rand(*shape) * 100).astype(dtype)
    idx = np.array(indices, np.int64)
    feeds = {"x": x} if constant else {"x": x, "idx": idx}
    out_shape = (*(shape[:-1] or (1,)), idx.size)  # a vector gives one row
    model = node_model("ArrayFeatureExtractor", feeds, {"y": (dtype, out_shape)}, opset=1, domain=ML,
                       initializers={"idx": idx} if constant else None)
    check_model(model, feeds, target, tmp_path, **EXACT)
