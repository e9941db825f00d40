"""Small deterministic models whose generated C is kept in tests/golden/ (tests/codegen/test_snapshots.py).

Each builder returns the same ONNX bytes on every machine: weights come from fixed seeds, opsets and IR
versions are explicit. Each model covers one kind of code the generator writes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.ops.test_ml_ops import complete_trees

ROOT = Path(__file__).resolve().parents[2]
F = TensorProto.FLOAT


def _weights(seed: int, *shape: int, scale: float = 0.5) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _model(nodes, inputs, outputs, inits, name: str, opsets=(("", 17),)) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                              producer_name="mlcc-snapshots")
    model.ir_version = 8
    return model


def conv_net() -> onnx.ModelProto:
    """The committed digits CNN: convolutions, pooling, Gemm."""
    return onnx.load(str(ROOT / "samples" / "digits_cnn.onnx"))


def transformer_block() -> onnx.ModelProto:
    """One pre-norm encoder block: LayerNorm, single-head attention (MatMul, Softmax), residuals, Gelu MLP."""
    seq, d, hidden = 8, 16, 32
    inits = {"ln1_s": 1 + _weights(1, d, scale=0.1), "ln1_b": _weights(2, d, scale=0.1),
             "wq": _weights(3, d, d, scale=0.25), "wk": _weights(4, d, d, scale=0.25), "wv": _weights(5, d, d, scale=0.25),
             "wo": _weights(6, d, d, scale=0.25), "scale": np.array(1 / np.sqrt(d), np.float32),
             "ln2_s": 1 + _weights(7, d, scale=0.1), "ln2_b": _weights(8, d, scale=0.1),
             "w1": _weights(9, d, hidden, scale=0.25), "b1": _weights(10, hidden, scale=0.1),
             "w2": _weights(11, hidden, d, scale=0.25), "b2": _weights(12, d, scale=0.1)}
    n = helper.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln1_s", "ln1_b"], ["h"], axis=-1, epsilon=1e-5),
        n("MatMul", ["h", "wq"], ["q"]), n("MatMul", ["h", "wk"], ["k"]), n("MatMul", ["h", "wv"], ["v"]),
        n("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        n("MatMul", ["q", "kt"], ["scores"]), n("Mul", ["scores", "scale"], ["scaled"]),
        n("Softmax", ["scaled"], ["probs"], axis=-1),
        n("MatMul", ["probs", "v"], ["ctx"]), n("MatMul", ["ctx", "wo"], ["attn"]),
        n("Add", ["x", "attn"], ["r1"]),
        n("LayerNormalization", ["r1", "ln2_s", "ln2_b"], ["h2"], axis=-1, epsilon=1e-5),
        n("MatMul", ["h2", "w1"], ["m1"]), n("Add", ["m1", "b1"], ["m1b"]),
        n("Gelu", ["m1b"], ["g"]),
        n("MatMul", ["g", "w2"], ["m2"]), n("Add", ["m2", "b2"], ["m2b"]),
        n("Add", ["r1", "m2b"], ["y"]),
    ]
    return _model(nodes, [helper.make_tensor_value_info("x", F, [1, seq, d])],
                  [helper.make_tensor_value_info("y", F, [1, seq, d])], inits, "transformer_block",
                  opsets=(("", 20),))


def lstm() -> onnx.ModelProto:
    """A bidirectional LSTM over 5 steps, returning the sequence and the final states."""
    seq, batch, inp, hidden = 5, 2, 4, 6
    inits = {"W": _weights(20, 2, 4 * hidden, inp), "R": _weights(21, 2, 4 * hidden, hidden),
             "B": _weights(22, 2, 8 * hidden, scale=0.1)}
    node = helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h", "y_c"], direction="bidirectional",
                            hidden_size=hidden)
    return _model([node], [helper.make_tensor_value_info("x", F, [seq, batch, inp])],
                  [helper.make_tensor_value_info("y", F, [seq, 2, batch, hidden]),
                   helper.make_tensor_value_info("y_h", F, [2, batch, hidden]),
                   helper.make_tensor_value_info("y_c", F, [2, batch, hidden])], inits, "lstm")


def concat_in_place() -> onnx.ModelProto:
    """SqueezeNet's fire module, named as in the zoo: 1x1 and 3x3 expand convolutions write into their slices of
    the Concat; the packed weights' names run past 40 characters and are cut at a word boundary."""
    inits = {"fire2/squeeze1x1_w_0": _weights(30, 4, 8, 1, 1), "fire2/squeeze1x1_b_0": _weights(31, 4, scale=0.1),
             "fire2/expand1x1_w_0": _weights(32, 5, 4, 1, 1), "fire2/expand1x1_b_0": _weights(33, 5, scale=0.1),
             "fire2/expand3x3_w_0": _weights(34, 7, 4, 3, 3), "fire2/expand3x3_b_0": _weights(35, 7, scale=0.1),
             "conv10_w_0": _weights(36, 3, 12, 1, 1), "conv10_b_0": _weights(37, 3, scale=0.1)}
    n = helper.make_node
    nodes = [n("Conv", ["x", "fire2/squeeze1x1_w_0", "fire2/squeeze1x1_b_0"], ["fire2/squeeze1x1_1"]),
             n("Relu", ["fire2/squeeze1x1_1"], ["fire2/squeeze1x1_2"]),
             n("Conv", ["fire2/squeeze1x1_2", "fire2/expand1x1_w_0", "fire2/expand1x1_b_0"], ["fire2/expand1x1_1"]),
             n("Relu", ["fire2/expand1x1_1"], ["fire2/expand1x1_2"]),
             n("Conv", ["fire2/squeeze1x1_2", "fire2/expand3x3_w_0", "fire2/expand3x3_b_0"], ["fire2/expand3x3_1"],
               pads=[1, 1, 1, 1]),
             n("Relu", ["fire2/expand3x3_1"], ["fire2/expand3x3_2"]),
             n("Concat", ["fire2/expand1x1_2", "fire2/expand3x3_2"], ["fire2/concat_1"], axis=1),
             n("Conv", ["fire2/concat_1", "conv10_w_0", "conv10_b_0"], ["y"])]
    return _model(nodes, [helper.make_tensor_value_info("x", F, [1, 8, 9, 11])],
                  [helper.make_tensor_value_info("y", F, [1, 3, 9, 11])], inits, "concat_in_place")


def control_flow() -> onnx.ModelProto:
    """An If on a run-time condition: one branch a Relu of a MatMul, the other a Neg of the input plus one."""
    x_info = helper.make_tensor_value_info("x", F, [2, 3])
    w = numpy_helper.from_array(_weights(40, 3, 3), "w")
    one = numpy_helper.from_array(np.ones((2, 3), np.float32), "one")
    then = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["mm"]), helper.make_node("Relu", ["mm"], ["r"])],
                             "then", [], [helper.make_tensor_value_info("r", F, [2, 3])], [w])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["ng"]), helper.make_node("Add", ["ng", "one"], ["r2"])],
                              "else", [], [helper.make_tensor_value_info("r2", F, [2, 3])], [one])
    node = helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)
    return _model([node], [x_info, helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                  [helper.make_tensor_value_info("y", F, [2, 3])], {}, "control_flow")


def tree_ensemble() -> onnx.ModelProto:
    """A classical-ML model: an ai.onnx.ml TreeEnsemble regressor (3 trees of depth 3) and an ArgMax over its scores."""
    rng = np.random.default_rng(50)
    trees, depth, features, targets = 3, 3, 4, 3
    attrs = complete_trees(rng, trees, depth, features, targets)
    count, leaves = trees * (2 ** depth - 1), 2 ** depth
    attrs.update(n_targets=targets, aggregate_function=1,
                 nodes_modes=numpy_helper.from_array(np.zeros(count, np.uint8), "nodes_modes"),
                 nodes_splits=numpy_helper.from_array(rng.uniform(-1, 1, count).astype(np.float32), "nodes_splits"),
                 leaf_weights=numpy_helper.from_array(rng.uniform(-2, 2, trees * leaves).astype(np.float32), "leaf_weights"))
    nodes = [helper.make_node("TreeEnsemble", ["x"], ["scores"], domain="ai.onnx.ml", **attrs),
             helper.make_node("ArgMax", ["scores"], ["label"], axis=1, keepdims=0)]
    return _model(nodes, [helper.make_tensor_value_info("x", F, [6, features])],
                  [helper.make_tensor_value_info("scores", F, [6, targets]),
                   helper.make_tensor_value_info("label", TensorProto.INT64, [6])], {}, "tree_ensemble",
                  opsets=(("", 17), ("ai.onnx.ml", 5)))


MODELS = {f.__name__: f for f in (conv_net, transformer_block, lstm, concat_in_place, control_flow, tree_ensemble)}
