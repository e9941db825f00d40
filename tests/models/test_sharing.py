"""Numerics where the memory planner shares bytes: views, Concat ranges, in-place ops, graph inputs and
outputs at the edges of those, and random graphs mixing them (tests/unit/test_plan.py checks the plans)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.unit.test_plan import random_graph

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "sharing", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)


def weights(*shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 0.3).astype(np.float32)


def inception_like(concat_is_output: bool):
    """Four branches into one Concat (producers write into its ranges), then a Split and a Slice (views)."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["b1"]),
             helper.make_node("Conv", ["x", "w2a"], ["b2a"]), helper.make_node("Relu", ["b2a"], ["b2r"]),
             helper.make_node("Conv", ["b2r", "w2b"], ["b2"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["x"], ["b3p"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["b3p", "w3"], ["b3c"]), helper.make_node("Sigmoid", ["b3c"], ["b3"]),
             helper.make_node("Relu", ["x"], ["b4"]),
             helper.make_node("Concat", ["b1", "b2", "b3", "b4"], ["cat"], axis=1),
             helper.make_node("Split", ["cat", "halves"], ["s1", "s2"], axis=1),
             helper.make_node("Slice", ["cat", "st", "en", "ax"], ["mid"]),
             helper.make_node("Add", ["s1", "s2"], ["sum"]), helper.make_node("Tanh", ["mid"], ["y2"]),
             helper.make_node("Flatten", ["sum"], ["y1"])]
    inits = [("w1", weights(4, 3, 1, 1, seed=1)), ("w2a", weights(5, 3, 1, 1, seed=2)), ("w2b", weights(6, 5, 3, 3, seed=3)),
             ("w3", weights(3, 3, 1, 1, seed=4)), ("st", np.array([2], np.int64)), ("en", np.array([9], np.int64)),
             ("ax", np.array([1], np.int64)), ("halves", np.array([8, 8], np.int64))]
    return model(nodes, [("x", [1, 3, 6, 5])], ["y1", "y2", *(["cat"] if concat_is_output else [])], inits)


@pytest.mark.parametrize("concat_is_output", [False, True])
def test_inception_like_branches(concat_is_output, target, tmp_path):
    report = check_model(inception_like(concat_is_output), {"x": rand(1, 3, 6, 5)}, target, tmp_path, rtol=1e-5, atol=1e-5)
    assert report["arena_bytes"] < report["intermediates_bytes"]


def test_dense_block_nested_concats(target, tmp_path):
    """DenseNet's pattern: every layer reads the running Concat and appends its output to it."""
    nodes, inits, prev = [], [], "x"
    for i in range(4):
        channels = 2 + 2 * i
        nodes += [helper.make_node("BatchNormalization", [prev, f"g{i}", f"b{i}", f"m{i}", f"v{i}"], [f"bn{i}"]),
                  helper.make_node("Relu", [f"bn{i}"], [f"r{i}"]),
                  helper.make_node("Conv", [f"r{i}", f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Concat", [prev, f"c{i}"], [f"cat{i}"], axis=1)]
        inits += [(f"g{i}", 1 + weights(channels, seed=i)), (f"b{i}", weights(channels, seed=10 + i)),
                  (f"m{i}", weights(channels, seed=20 + i)), (f"v{i}", 1 + np.abs(weights(channels, seed=30 + i))),
                  (f"w{i}", weights(2, channels, 3, 3, seed=40 + i))]
        prev = f"cat{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [prev], ["y"]))
    check_model(model(nodes, [("x", [1, 2, 5, 4])], ["y"], inits), {"x": rand(1, 2, 5, 4)}, target, tmp_path,
                rtol=1e-4, atol=1e-5)


def test_views_of_graph_inputs_and_outputs(target, tmp_path):
    """A Reshape of the input (a pointer into the caller's buffer), a Reshape of an output (a pointer into
    the caller's output) read by a later step, and an in-place chain between them."""
    nodes = [helper.make_node("Reshape", ["x", "flat"], ["xf"]), helper.make_node("Exp", ["xf"], ["e"]),
             helper.make_node("Neg", ["e"], ["n"]), helper.make_node("Abs", ["n"], ["out1"]),
             helper.make_node("Reshape", ["out1", "grid"], ["g"]), helper.make_node("Softmax", ["g"], ["out2"]),
             helper.make_node("Squeeze", ["x", "axes"], ["out3"])]
    inits = [("flat", np.array([12], np.int64)), ("grid", np.array([3, 4], np.int64)), ("axes", np.array([0], np.int64))]
    check_model(model(nodes, [("x", [1, 2, 6])], ["out1", "out2", "out3"], inits), {"x": rand(1, 2, 6)}, target, tmp_path,
                rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 3, 7, 11])
def test_random_sharing_graphs(seed, target, tmp_path):
    nodes, _, outputs, inits = random_graph(seed)
    m = model(nodes, [("x", [8])], [o.name for o in outputs], inits)
    check_model(m, {"x": rand(8)}, target, tmp_path, rtol=1e-5, atol=1e-5)
