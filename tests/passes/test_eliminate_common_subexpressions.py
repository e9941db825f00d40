import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT


def io(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def shared_branches_model():
    """Two branches computing the same thing from equal (but separately stored) weights, and a near twin."""
    w = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["a1"], name="mm1"),
             helper.make_node("MatMul", ["x", "w2"], ["a2"], name="mm2"),
             helper.make_node("Relu", ["a1"], ["r1"], name="relu1"),
             helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
             helper.make_node("LeakyRelu", ["a1"], ["l1"], name="leaky1", alpha=0.1),
             helper.make_node("LeakyRelu", ["a1"], ["l2"], name="leaky2", alpha=0.2),
             helper.make_node("Sum", ["r1", "r2", "l1", "l2"], ["y"], name="sum")]
    inits = [numpy_helper.from_array(w, "w1"), numpy_helper.from_array(w.copy(), "w2")]
    return make(nodes, [io("x", [3, 4])], [io("y", [3, 4]), io("r2", [3, 4])], inits)


def test_equal_weights_and_identical_nodes_merge():
    graph = imported(shared_branches_model())
    did = run_pass(graph, "eliminate_common_subexpressions")
    assert did == {"merged_nodes": 2, "by_op": {"MatMul": 1, "Relu": 1}, "merged_constants": 1}
    assert [n.op_type for n in graph.nodes] == ["MatMul", "Relu", "LeakyRelu", "LeakyRelu", "Sum"]
    relu = graph.nodes[1]
    assert graph.nodes[-1].inputs[:2] == [relu.outputs[0], relu.outputs[0]]
    assert graph.outputs[1] is relu.outputs[0] and graph.output_names == ["y", "r2"]


def test_numerics_unchanged(target, tmp_path):
    report = check_model(shared_branches_model(), {"x": rand(3, 4)}, target, tmp_path, rtol=1e-5, atol=1e-6)
    assert report["weights_tensors"] == 1


def test_different_weights_are_kept():
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Mul", ["x", "c1"], ["a"], name="m1"), helper.make_node("Mul", ["x", "c2"], ["b"], name="m2"),
             helper.make_node("Add", ["a", "b"], ["y"], name="add")]
    inits = [numpy_helper.from_array(rng.normal(size=4).astype(np.float32), n) for n in ("c1", "c2")]
    graph = imported(make(nodes, [io("x", [4])], [io("y", [4])], inits))
    assert run_pass(graph, "eliminate_common_subexpressions")["merged_nodes"] == 0
    assert len(graph.nodes) == 3
