import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT


def _init(name, *shape, seed=0, scale=0.3):
    return numpy_helper.from_array((np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32), name)


def residual_block():
    """conv+relu, conv + bias Add + residual Add from a later shortcut conv + Clip, depthwise + SiLU, Gemm + Gelu."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Add", ["c2", "bb"], ["c2b"], name="bias2"),
             helper.make_node("Conv", ["x", "w3"], ["sc"], name="shortcut"),
             helper.make_node("Add", ["c2b", "sc"], ["s"], name="residual"),
             helper.make_node("Clip", ["s", "lo", "hi"], ["r2"], name="relu6"),
             helper.make_node("Conv", ["r2", "wd"], ["d"], group=8, pads=[1, 1, 1, 1], name="depthwise"),
             helper.make_node("Sigmoid", ["d"], ["ds"], name="sig"),
             helper.make_node("Mul", ["d", "ds"], ["dm"], name="silu"),
             helper.make_node("Flatten", ["dm"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "wg", "bg"], ["g"], transB=1, name="fc"),
             helper.make_node("Gelu", ["g"], ["y"], name="gelu")]
    inits = [_init("w1", 8, 4, 3, 3), _init("b1", 8, seed=1), _init("w2", 8, 8, 3, 3, seed=2), _init("bb", 8, 1, 1, seed=3),
             _init("w3", 8, 4, 1, 1, seed=4), _init("wd", 8, 1, 3, 3, seed=5), _init("wg", 10, 288, seed=6, scale=0.05),
             _init("bg", 10, seed=7), numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
    return make(nodes, [helper.make_tensor_value_info("x", F, [2, 4, 6, 6])], [helper.make_tensor_value_info("y", F, [2, 10])],
                inits, opset=20)


def test_bias_residual_and_activations_fold_into_their_producers():
    graph = imported(residual_block())
    did = run_pass(graph, "fuse_epilogues")
    assert did["fused"] == {"bias": 1, "clip": 1, "gelu_erf": 1, "relu": 1, "residual": 1, "silu": 1}
    assert [n.op_type for n in graph.nodes] == ["Conv", "Conv", "Conv", "Conv", "Flatten", "Gemm"]
    conv2 = next(n for n in graph.nodes if n.name == "conv2")
    # moved after the shortcut conv it now reads; bias folded; clamp fused
    assert [n.name for n in graph.nodes].index("conv2") > [n.name for n in graph.nodes].index("shortcut")
    assert conv2.inputs[3].name == "sc" and conv2.outputs[0].name == "r2"
    assert conv2.attrs["activation"] == "clip" and conv2.attrs["activation_params"] == [0.0, 6.0]
    np.testing.assert_allclose(conv2.inputs[2].data, numpy_helper.to_array(residual_block().graph.initializer[3]).reshape(-1))
    graph.verify()


def test_an_activation_after_the_residual_is_needed_elsewhere_stays():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu"),
             helper.make_node("Sigmoid", ["c"], ["z"], name="other_reader")]
    graph = imported(make(nodes, [helper.make_tensor_value_info("x", F, [1, 2, 3, 3])],
                          [helper.make_tensor_value_info("y", F, [1, 2, 3, 3]), helper.make_tensor_value_info("z", F, [1, 2, 3, 3])],
                          [_init("w", 2, 2, 1, 1)]))
    assert run_pass(graph, "fuse_epilogues")["removed_nodes"] == 0


def test_a_residual_after_the_activation_is_not_taken():
    """The kernel adds the residual before the activation: Relu then Add keeps the Add."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "x"], ["y"], name="add")]
    graph = imported(make(nodes, [helper.make_tensor_value_info("x", F, [3, 4])], [helper.make_tensor_value_info("y", F, [3, 4])],
                          [_init("w", 4, 4)]))
    did = run_pass(graph, "fuse_epilogues")
    assert did["fused"] == {"relu": 1} and [n.op_type for n in graph.nodes] == ["MatMul", "Add"]


@pytest.mark.parametrize("opt", [0, 2])
def test_numerics_unchanged(target, tmp_path, opt):
    # the fusion's op counts alone: on NHWC targets choose_layout adds Transposes at the region's edges
    report = check_model(residual_block(), {"x": rand(2, 4, 6, 6)}, target, tmp_path, rtol=1e-4, atol=1e-4, opt_level=opt,
                         disabled_passes=("choose_layout",))
    if opt == 2:
        assert report["ops"] == {"Conv": 4, "Flatten": 1, "Gemm": 1}


def test_batched_matmul_takes_a_residual_and_activation(target, tmp_path):
    nodes = [helper.make_node("MatMul", ["a", "b"], ["m"], name="mm"),
             helper.make_node("Add", ["r", "m"], ["s"], name="add"),
             helper.make_node("Tanh", ["s"], ["y"], name="tanh")]
    model = make(nodes, [helper.make_tensor_value_info(n, F, s) for n, s in (("a", [2, 3, 5, 4]), ("b", [2, 3, 4, 6]), ("r", [2, 3, 5, 6]))],
                 [helper.make_tensor_value_info("y", F, [2, 3, 5, 6])])
    report = check_model(model, {"a": rand(2, 3, 5, 4), "b": rand(2, 3, 4, 6, seed=1), "r": rand(2, 3, 5, 6, seed=2)}, target, tmp_path)
    assert report["ops"] == {"MatMul": 1}


def test_a_sum_of_two_is_a_residual(target, tmp_path):
    """ResNet exports write the shortcut as Sum(a, b)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Sum", ["x", "c"], ["s"], name="shortcut"),
             helper.make_node("Relu", ["s"], ["y"], name="relu")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [1, 4, 5, 5])], [helper.make_tensor_value_info("y", F, [1, 4, 5, 5])],
                 [_init("w", 4, 4, 3, 3)])
    report = check_model(model, {"x": rand(1, 4, 5, 5)}, target, tmp_path, disabled_passes=("choose_layout",))
    assert report["ops"] == {"Conv": 1}
