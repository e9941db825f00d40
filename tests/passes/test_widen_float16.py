import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model
from tests.passes.util import imported, make, run_pass

H = TensorProto.FLOAT16


def half_model():
    """y = Relu(x * w) + x in float16, w a constant: two ops without native float16."""
    nodes = [helper.make_node("Mul", ["x", "w"], ["m"], name="mul"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "x"], ["y"], name="add")]
    w = numpy_helper.from_array(np.array([0.5, -2.0, 3.0], np.float16), "w")
    return make(nodes, [helper.make_tensor_value_info("x", H, [2, 3])], [helper.make_tensor_value_info("y", H, [2, 3])], [w])


def test_half_ops_compute_in_single_with_casts_at_the_edges():
    graph = imported(half_model())
    did = run_pass(graph, "widen_float16")
    assert did == {"widened_nodes": 3}
    ops = [n.op_type for n in graph.nodes]
    # x widened once (shared by mul and add); every half result rounded, as onnx's reference rounds per op
    assert ops == ["Cast", "Mul", "Cast", "Cast", "Relu", "Cast", "Cast", "Add", "Cast"]
    mul = graph.nodes[1]
    assert [v.dtype for v in mul.inputs] == [np.float32, np.float32] and mul.inputs[1].is_const
    assert graph.outputs[0].dtype == np.float16 and graph.nodes[-1].outputs[0] is graph.outputs[0]


def test_float32_graph_is_untouched():
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    graph = imported(make(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])]))
    assert run_pass(graph, "widen_float16") == {"widened_nodes": 0} and len(graph.nodes) == 1


@pytest.mark.parametrize("target", ["host", "wasm32"])
def test_numerics_match_reference(target, tmp_path):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float16)
    check_model(half_model(), {"x": x}, target, tmp_path, rtol=1e-3, atol=1e-3)
