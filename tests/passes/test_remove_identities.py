import numpy as np
from onnx import TensorProto, helper

from tests.golden import check_model
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT


def model_with_identities():
    nodes = [helper.make_node("Identity", ["x"], ["a"], name="id"),
             helper.make_node("Dropout", ["a"], ["b"], name="drop"),
             helper.make_node("Relu", ["b"], ["c"], name="relu"),
             helper.make_node("Identity", ["c"], ["y"], name="id_out")]
    return make(nodes, [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, [2, 3])])


def test_identity_and_inference_dropout_are_removed_and_output_name_kept():
    graph = imported(model_with_identities())
    did = run_pass(graph, "remove_identities")
    assert did["by_op"] == {"Dropout": 1, "Identity": 2}
    assert [n.op_type for n in graph.nodes] == ["Relu"]
    assert graph.nodes[0].inputs[0] is graph.inputs[0]
    assert graph.output_names == ["y"]


def test_numerics_unchanged(tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    check_model(model_with_identities(), {"x": x}, "host", tmp_path)


def test_training_mode_dropout_is_kept():
    nodes = [helper.make_node("Dropout", ["x", "ratio", "train"], ["y"], name="drop")]
    from onnx import numpy_helper
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"), numpy_helper.from_array(np.array(True), "train")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [4])], [helper.make_tensor_value_info("y", F, [4])], inits)
    graph = imported(model)
    assert run_pass(graph, "remove_identities")["removed_nodes"] == 0
