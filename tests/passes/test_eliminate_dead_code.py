from onnx import TensorProto, helper

from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT


def test_unused_branch_is_removed():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="used"),
             helper.make_node("Exp", ["x"], ["dead1"], name="dead_a"),
             helper.make_node("Neg", ["dead1"], ["dead2"], name="dead_b")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [3])], [helper.make_tensor_value_info("y", F, [3])])
    graph = imported(model)
    assert run_pass(graph, "eliminate_dead_code") == {"removed_nodes": 2}
    assert [n.name for n in graph.nodes] == ["used"]
