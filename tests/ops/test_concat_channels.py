"""Golden tests of channels-last Concat along channels: convolutions writing their rows straight into their
channel slice of the Concat's output (pointwise, im2col in pixel chunks, grouped, batch 2), and the copies
that remain where an input is not written that way. Tolerance rtol=1e-4, atol=1e-4 as tests/ops/test_conv.py
(sums of up to a few hundred products in another order than onnxruntime's)."""

import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand

TOL = dict(rtol=1e-4, atol=1e-4)


def model(nodes, x_shape, weights, outputs=("y",)):
    graph = helper.make_graph(nodes, "cat", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                              [numpy_helper.from_array(w, n) for n, w in weights.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)


def conv(name, x, w_shape, seed, weights, **attrs):
    weights[f"{name}_w"], weights[f"{name}_b"] = rand(*w_shape, seed=seed), rand(w_shape[0], seed=seed + 50)
    return [helper.make_node("Conv", [x, f"{name}_w", f"{name}_b"], [f"{name}_c"], **attrs),
            helper.make_node("Relu", [f"{name}_c"], [name])]


CASES = {
    # squeezenet's fire module: 1x1 and 3x3 expands (pointwise and im2col GEMMs)
    "fire": ((1, 8, 9, 11), [("e1", (5, 4, 1, 1), {}), ("e3", (7, 4, 3, 3), {"pads": [1, 1, 1, 1]})], 2),
    # inception-like: four branches (1x1, 3x3, grouped 1x1, 5x5), two images
    "branches": ((2, 8, 13, 13), [("b1", (16, 4, 1, 1), {}), ("b2", (6, 4, 3, 3), {"pads": [1, 1, 1, 1]}),
                                  ("b3", (8, 2, 1, 1), {"group": 2}),
                                  ("b4", (40, 4, 5, 5), {"pads": [2, 2, 2, 2]})], 4),
    # a MaxPool branch is not written at the pitch: the Concat copies
    "pool_branch": ((1, 8, 9, 11), [("e1", (5, 4, 1, 1), {}), ("pool", None, {})], 0),
}


@pytest.mark.parametrize("case", CASES)
def test_concat_of_channels(case, target, tmp_path):
    x_shape, branches, written = CASES[case]
    weights, names = {}, []
    nodes = conv("s", "x", (4, 8, 1, 1), 1, weights)
    for i, (name, w_shape, attrs) in enumerate(branches):
        if w_shape is None:
            nodes.append(helper.make_node("MaxPool", ["s"], [name], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        else:
            nodes += conv(name, "s", w_shape, 10 + i, weights, **attrs)
        names.append(name)
    nodes.append(helper.make_node("Concat", names, ["cat"], axis=1))
    channels = sum(4 if w is None else w[0] for _, w, _ in branches)
    nodes += conv("y", "cat", (3, channels, 1, 1), 99, weights)
    x = rand(*x_shape)
    report = check_model(model(nodes, x_shape, weights), {"x": x}, target, tmp_path, **TOL)
    assert report["memory_sharing"]["written_into_concat_channels"] == written


def test_concat_of_channels_as_the_graph_output(target, tmp_path):
    weights = {}
    nodes = [*conv("a", "x", (5, 3, 1, 1), 1, weights), *conv("b", "x", (6, 3, 3, 3), 2, weights, pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["a", "b"], ["y"], axis=1)]
    x = rand(1, 3, 7, 8)
    check_model(model(nodes, (1, 3, 7, 8), weights), {"x": x}, target, tmp_path, **TOL)
