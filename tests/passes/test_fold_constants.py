import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT


def test_shape_gather_concat_reshape_chain_folds():
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "zero"], ["n1"], name="unsq"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"], name="reshape"),
    ]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 4])],
                 [helper.make_tensor_value_info("y", F, [2, 12])], inits)
    graph = imported(model)
    did = run_pass(graph, "fold_constants")
    assert did["folded_nodes"] == 4
    assert [n.op_type for n in graph.nodes] == ["Reshape"]
    np.testing.assert_array_equal(graph.nodes[0].inputs[1].data, [2, -1])
    assert "float32[2,12] = Reshape(%x, %target)" in text(graph)


def test_constant_of_shape_weight_folds_to_a_constant():
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["w"], name="fill",
                              value=numpy_helper.from_array(np.array([0.5], np.float32))),
             helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [3])], [helper.make_tensor_value_info("y", F, [3])],
                 [numpy_helper.from_array(np.array([3], np.int64), "shape")])
    graph = imported(model)
    run_pass(graph, "fold_constants")
    assert [n.op_type for n in graph.nodes] == ["Add"]
    np.testing.assert_array_equal(graph.nodes[0].inputs[1].data, np.full(3, 0.5, np.float32))


def test_nothing_to_fold_leaves_graph_unchanged():
    model = make([helper.make_node("Relu", ["x"], ["y"], name="r")], [helper.make_tensor_value_info("x", F, [3])],
                 [helper.make_tensor_value_info("y", F, [3])])
    graph = imported(model)
    before = text(graph)
    assert run_pass(graph, "fold_constants")["folded_nodes"] == 0
    assert text(graph) == before
