import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT
C = 4


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)


def bn_inits(channels=C, seed=0):
    rng = np.random.default_rng(seed)
    return [const("gamma", rng.uniform(0.5, 1.0, channels)), const("beta", rng.normal(size=channels)),
            const("mean", rng.normal(size=channels)), const("var", rng.uniform(0.5, 1.5, channels))]


def bn(x, y, **attrs):
    return helper.make_node("BatchNormalization", [x, "gamma", "beta", "mean", "var"], [y], name="bn", **attrs)


def io(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def conv_bn_model(with_bias=True, followers=False):
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Conv", ["x", "w", "b"] if with_bias else ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             bn("c", "n" if followers else "z")]
    inits = [const("w", rng.normal(size=(C, 3, 3, 3))), const("b", rng.normal(size=C)), *bn_inits()]
    if followers:  # Caffe2's exports: a per-channel scale and shift after the BN
        nodes += [helper.make_node("Mul", ["n", "s"], ["m"], name="mul"), helper.make_node("Add", ["t", "m"], ["z"], name="add")]
        inits += [const("s", rng.uniform(0.5, 2, (C, 1, 1))), const("t", rng.normal(size=(C, 1, 1)))]
    nodes.append(helper.make_node("Relu", ["z"], ["y"], name="relu"))
    return make(nodes, [io("x", [2, 3, 5, 5])], [io("y", [2, C, 5, 5])], inits if with_bias else inits[:1] + inits[2:])


def test_conv_bn_folds_into_weights_and_bias():
    graph = imported(conv_bn_model())
    did = run_pass(graph, "fold_batch_norm")
    assert did == {"folded": 1, "into": {"Conv": 1}, "to_scale_shift": 0, "absorbed_nodes": 0}
    assert [n.op_type for n in graph.nodes] == ["Conv", "Relu"]
    assert "%z:float32[2,4,5,5] = Conv(%x, %w_folded, %conv_bias_folded)" in text(graph)


def test_conv_without_bias_and_following_scale_shift_fold_into_one_conv():
    graph = imported(conv_bn_model(with_bias=False, followers=True))
    did = run_pass(graph, "fold_batch_norm")
    assert did["into"] == {"Conv": 1} and did["absorbed_nodes"] == 2
    assert [n.op_type for n in graph.nodes] == ["Conv", "Relu"]
    assert len(graph.nodes[0].inputs) == 3


@pytest.mark.parametrize("with_bias,followers", [(True, False), (False, True)])
def test_conv_bn_numerics(with_bias, followers, target, tmp_path):
    report = check_model(conv_bn_model(with_bias, followers), {"x": rand(2, 3, 5, 5)}, target, tmp_path, rtol=1e-4, atol=1e-4)
    assert "BatchNormalization" not in report["ops"]


def conv_transpose_bn_model(group):
    rng = np.random.default_rng(2)
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["c"], name="deconv", group=group, strides=[2, 2]), bn("c", "y")]
    inits = [const("w", rng.normal(size=(4, C // group, 3, 3))), *bn_inits()]
    return make(nodes, [io("x", [1, 4, 3, 3])], [io("y", [1, C, 7, 7])], inits)


@pytest.mark.parametrize("group", [1, 2])
def test_conv_transpose_bn_folds_per_output_channel_of_each_group(group, target, tmp_path):
    model = conv_transpose_bn_model(group)
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["into"] == {"ConvTranspose": 1}
    assert [n.op_type for n in graph.nodes] == ["ConvTranspose"]
    check_model(model, {"x": rand(1, 4, 3, 3)}, target, tmp_path, rtol=1e-4, atol=1e-4)


def gemm_bn_model(trans_b, c_shape):
    rng = np.random.default_rng(3)
    b_shape = (C, 6) if trans_b else (6, C)
    inputs = ["a", "b"] + (["c"] if c_shape is not None else [])
    nodes = [helper.make_node("Gemm", inputs, ["g"], name="gemm", transB=trans_b, alpha=0.5, beta=2.0), bn("g", "y")]
    inits = [const("b", rng.normal(size=b_shape)), *bn_inits()]
    if c_shape is not None:
        inits.append(const("c", rng.normal(size=c_shape)))
    return make(nodes, [io("a", [3, 6])], [io("y", [3, C])], inits)


@pytest.mark.parametrize("trans_b,c_shape", [(0, None), (1, (C,)), (0, (3, C)), (1, (3, 1))])
def test_gemm_bn_scales_columns_and_bias(trans_b, c_shape, target, tmp_path):
    model = gemm_bn_model(trans_b, c_shape)
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["into"] == {"Gemm": 1}
    assert [n.op_type for n in graph.nodes] == ["Gemm"] and graph.nodes[0].attrs["beta"] == 1.0
    check_model(model, {"a": rand(3, 6)}, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_matmul_bn_becomes_gemm_with_bias(target, tmp_path):
    rng = np.random.default_rng(4)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"], name="mm"), bn("p", "y")]
    model = make(nodes, [io("a", [3, 6])], [io("y", [3, C])], [const("b", rng.normal(size=(6, C))), *bn_inits()])
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["into"] == {"MatMul": 1}
    assert [n.op_type for n in graph.nodes] == ["Gemm"] and len(graph.nodes[0].inputs) == 3
    check_model(model, {"a": rand(3, 6)}, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_batched_matmul_bn_is_a_scale_and_shift():
    """A BN over axis 1 of a batched product scales a batch axis: not B's columns."""
    rng = np.random.default_rng(5)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"], name="mm"), bn("p", "y")]
    model = make(nodes, [io("a", [2, C, 3, 6])], [io("y", [2, C, 3, 5])], [const("b", rng.normal(size=(6, 5))), *bn_inits()])
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["to_scale_shift"] == 1
    assert [n.op_type for n in graph.nodes] == ["MatMul", "Mul", "Add"]


def lone_bn_model():
    nodes = [helper.make_node("MaxPool", ["x"], ["p"], name="pool", kernel_shape=[2, 2]), bn("p", "n"),
             helper.make_node("Mul", ["n", "s"], ["y"], name="mul")]
    s = np.random.default_rng(6).uniform(0.5, 2, (C, 1, 1))
    return make(nodes, [io("x", [2, C, 6, 6])], [io("y", [2, C, 5, 5])], [*bn_inits(), const("s", s)])


def test_lone_bn_becomes_mul_and_add_by_channel_constants(target, tmp_path):
    graph = imported(lone_bn_model())
    did = run_pass(graph, "fold_batch_norm")
    assert did["to_scale_shift"] == 1 and did["absorbed_nodes"] == 1
    assert [n.op_type for n in graph.nodes] == ["MaxPool", "Mul", "Add"]
    assert [v.shape for v in (graph.nodes[1].inputs[1], graph.nodes[2].inputs[1])] == [(C, 1, 1), (C, 1, 1)]
    assert graph.nodes[2].outputs[0] is graph.outputs[0]
    check_model(lone_bn_model(), {"x": rand(2, C, 6, 6)}, target, tmp_path, rtol=1e-4, atol=1e-5)


def test_producer_read_twice_is_not_folded():
    rng = np.random.default_rng(7)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"), bn("c", "n"),
             helper.make_node("Add", ["n", "c"], ["y"], name="add")]
    model = make(nodes, [io("x", [1, 3, 4, 4])], [io("y", [1, C, 4, 4])], [const("w", rng.normal(size=(C, 3, 1, 1))), *bn_inits()])
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["to_scale_shift"] == 1
    assert [n.op_type for n in graph.nodes] == ["Conv", "Mul", "Add", "Add"]


def test_runtime_weights_are_not_folded_into():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"), bn("c", "y")]
    model = make(nodes, [io("x", [1, 3, 4, 4]), io("w", [C, 3, 1, 1])], [io("y", [1, C, 4, 4])], bn_inits())
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["to_scale_shift"] == 1
    assert [n.op_type for n in graph.nodes] == ["Conv", "Mul", "Add"]


def test_training_mode_is_left_alone():
    node = helper.make_node("BatchNormalization", ["x", "gamma", "beta", "mean", "var"], ["y", "rm", "rv"], name="bn",
                            training_mode=1)
    model = make([node], [io("x", [2, C, 3])], [io("y", [2, C, 3])], bn_inits())
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["folded"] == 0
    assert [n.op_type for n in graph.nodes] == ["BatchNormalization"]


def test_opset7_per_activation_bn_becomes_scale_and_shift_per_activation(target, tmp_path):
    rng = np.random.default_rng(8)
    shape = (C, 2, 3)
    inits = [const("gamma", rng.uniform(0.5, 1, shape)), const("beta", rng.normal(size=shape)),
             const("mean", rng.normal(size=shape)), const("var", rng.uniform(0.5, 1.5, shape))]
    model = make([bn("x", "y", spatial=0)], [io("x", [2, C, 2, 3])], [io("y", [2, C, 2, 3])], inits, opset=7)
    graph = imported(model)
    assert run_pass(graph, "fold_batch_norm")["to_scale_shift"] == 1
    assert graph.nodes[0].inputs[1].shape == shape
    check_model(model, {"x": rand(2, C, 2, 3)}, target, tmp_path, rtol=1e-4, atol=1e-5)
