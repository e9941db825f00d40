import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT


def swish_chain(extra_output=False):
    """x*s + b -> SiLU -> Gelu, with a broadcast bias; optionally the Add's result is also an output."""
    nodes = [helper.make_node("Mul", ["x", "s"], ["a"], name="scale"),
             helper.make_node("Add", ["a", "b"], ["c"], name="shift"),
             helper.make_node("Sigmoid", ["c"], ["d"], name="sig"),
             helper.make_node("Mul", ["c", "d"], ["e"], name="silu"),
             helper.make_node("Gelu", ["e"], ["y"], name="gelu")]
    outputs = [helper.make_tensor_value_info("y", F, [2, 3, 4, 5])]
    if extra_output:
        outputs.append(helper.make_tensor_value_info("c", F, [2, 3, 4, 5]))
    return make(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 4, 5]), helper.make_tensor_value_info("b", F, [3, 1, 1])],
                outputs, [numpy_helper.from_array(np.array([1.5], np.float32), "s")], opset=20)


def test_a_connected_group_becomes_one_loop():
    graph = imported(swish_chain())
    did = run_pass(graph, "fuse_elementwise")
    assert did == {"groups": 1, "fused_nodes": 5, "removed_nodes": 4}
    assert text(graph).splitlines()[-2:] == [
        "  %y:float32[2,3,4,5] = FusedElementwise(%x, %s, %b) body=[Mul(%x,%s),Add(%a,%b),Sigmoid(%c),Mul(%c,%d),Gelu(%e)]  # gelu",
        "  output %y"]


def test_an_intermediate_read_outside_splits_the_group():
    graph = imported(swish_chain(extra_output=True))
    did = run_pass(graph, "fuse_elementwise")
    assert did["groups"] == 2  # [scale, shift] and [sig, silu, gelu]: c is a graph output
    assert [n.op_type for n in graph.nodes] == ["FusedElementwise", "FusedElementwise"]


def test_a_smaller_producer_is_not_recomputed_per_element():
    nodes = [helper.make_node("Exp", ["v"], ["e"], name="exp"),
             helper.make_node("Mul", ["x", "e"], ["y"], name="mul")]
    graph = imported(make(nodes, [helper.make_tensor_value_info("x", F, [8, 16]), helper.make_tensor_value_info("v", F, [16])],
                          [helper.make_tensor_value_info("y", F, [8, 16])]))
    assert run_pass(graph, "fuse_elementwise")["groups"] == 0


def test_numerics_unchanged(target, tmp_path):
    feeds = {"x": rand(2, 3, 4, 5), "b": rand(3, 1, 1, seed=1)}
    report = check_model(swish_chain(extra_output=True), feeds, target, tmp_path)
    assert report["ops"] == {"FusedElementwise": 2}
