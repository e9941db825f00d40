import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT


def shuffle_unit(act=("Relu", [], {})):
    """ShuffleNet's stride-2 unit: Concat(grouped Conv + BN, AveragePool of the input) -> activation."""
    rng = np.random.default_rng(0)
    kind, extra, attrs = act
    inits = [numpy_helper.from_array((rng.standard_normal((8, 2, 3, 3)) * 0.3).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")]
    inits += [numpy_helper.from_array(np.float32(v), name) for name, v in extra]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], group=2, strides=[2, 2], pads=[1, 1, 1, 1], name="gconv"),
             helper.make_node("AveragePool", ["x"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              name="pool"),
             helper.make_node("Concat", ["c", "p"], ["cat"], axis=1, name="concat"),
             helper.make_node(kind, ["cat", *[name for name, _ in extra]], ["y"], name="act", **attrs)]
    return make(nodes, [helper.make_tensor_value_info("x", F, [1, 4, 9, 9])],
                [helper.make_tensor_value_info("y", F, [1, 12, 5, 5])], inits)


def test_an_activation_after_a_concat_moves_into_the_producers():
    graph = imported(shuffle_unit())
    assert run_pass(graph, "distribute_activations") == {"moved": 1}
    run_pass(graph, "fuse_epilogues")
    conv = next(n for n in graph.nodes if n.name == "gconv")
    assert conv.attrs["activation"] == "relu"  # in the convolution's epilogue
    concat = next(n for n in graph.nodes if n.name == "concat")
    assert concat.outputs[0].name == "y" and concat.inputs[0] is conv.outputs[0]
    assert len(graph.nodes) == 4  # conv, pool, the pool slice's own Relu, concat
    graph.verify()


def test_a_concat_no_producer_can_take_the_activation_keeps_it():
    nodes = [helper.make_node("Concat", ["x", "z"], ["cat"], axis=1, name="concat"),
             helper.make_node("Relu", ["cat"], ["y"], name="relu")]
    graph = imported(make(nodes, [helper.make_tensor_value_info("x", F, [1, 2, 3]),
                                  helper.make_tensor_value_info("z", F, [1, 2, 3])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 3])], []))
    assert run_pass(graph, "distribute_activations") == {"moved": 0}


def test_a_clip_keeps_its_bounds_on_each_slice():
    graph = imported(shuffle_unit(("Clip", [("lo", 0.0), ("hi", 6.0)], {})))
    assert run_pass(graph, "distribute_activations") == {"moved": 1}
    clips = [n for n in graph.nodes if n.op_type == "Clip"]
    assert len(clips) == 2 and all([v.name for v in n.inputs[1:]] == ["lo", "hi"] for n in clips)
    run_pass(graph, "fuse_epilogues")
    conv = next(n for n in graph.nodes if n.name == "gconv")
    assert conv.attrs["activation"] == "clip" and conv.attrs["activation_params"] == [0.0, 6.0]
    graph.verify()


@pytest.mark.parametrize("target", ["host", "wasm32"])
def test_a_shuffle_unit_matches_onnxruntime(target, tmp_path):
    x = np.random.default_rng(1).standard_normal((1, 4, 9, 9)).astype(np.float32)
    report = check_model(shuffle_unit(), {"x": x}, target, tmp_path)
    assert next(p for p in report["passes"] if p["pass"] == "distribute_activations")["moved"] == 1
