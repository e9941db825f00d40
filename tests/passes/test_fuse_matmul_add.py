import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT


def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)


def io(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def linear_model(a_shape, bias_shape, bias_first=False, b_input=False):
    n = 5
    rng = np.random.default_rng(0)
    out = [*a_shape[:-1], n]
    add_inputs = ["bias", "p"] if bias_first else ["p", "bias"]
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"], name="mm"), helper.make_node("Add", add_inputs, ["y"], name="add")]
    inits = [const("bias", rng.normal(size=bias_shape))]
    inputs = [io("a", a_shape)]
    if b_input:
        inputs.append(io("b", [a_shape[-1], n]))
    else:
        inits.append(const("b", rng.normal(size=(a_shape[-1], n))))
    return make(nodes, inputs, [io("y", out)], inits)


def feeds(model):
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    return {name: rand(*shape, seed=k) for k, (name, shape) in enumerate(shapes.items())}


def test_2d_matmul_add_becomes_gemm():
    graph = imported(linear_model([3, 4], [5]))
    assert run_pass(graph, "fuse_matmul_add") == {"fused": 1, "batched_rows": 0}
    assert "%y:float32[3,5] = Gemm(%a, %b, %bias) alpha=1.0 beta=1.0 transA=0 transB=0" in text(graph)
    assert len(graph.nodes) == 1


def test_batched_rows_become_one_gemm_over_the_flattened_rows():
    graph = imported(linear_model([2, 3, 4], [1, 1, 5], bias_first=True))
    assert run_pass(graph, "fuse_matmul_add") == {"fused": 1, "batched_rows": 1}
    node, = graph.nodes
    assert node.op_type == "Gemm" and node.inputs[2].shape == (5,) and node.outputs[0].shape == (2, 3, 5)


@pytest.mark.parametrize("a_shape,bias_shape,b_input", [([3, 4], [5], False), ([3, 4], [3, 5], False),
                                                        ([2, 3, 4], [5], False), ([2, 2, 3, 4], [1, 5], True)])
def test_numerics(a_shape, bias_shape, b_input, target, tmp_path):
    model = linear_model(a_shape, bias_shape, b_input=b_input)
    report = check_model(model, feeds(model), target, tmp_path, rtol=1e-4, atol=1e-5)
    assert report["ops"] == {"Gemm": 1}


@pytest.mark.parametrize("a_shape,bias_shape", [([2, 3, 4], [3, 5]), ([2, 3, 4], [3, 1])])
def test_bias_varying_along_rows_of_a_batched_product_is_not_fused(a_shape, bias_shape):
    graph = imported(linear_model(a_shape, bias_shape))
    assert run_pass(graph, "fuse_matmul_add")["fused"] == 0


def test_runtime_bias_and_product_read_twice_are_not_fused():
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"], name="mm"), helper.make_node("Add", ["p", "c"], ["y"], name="add")]
    model = make(nodes, [io("a", [3, 4]), io("c", [5])], [io("y", [3, 5])], [const("b", np.ones((4, 5)))])
    graph = imported(model)
    assert run_pass(graph, "fuse_matmul_add")["fused"] == 0
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"], name="mm"), helper.make_node("Add", ["p", "c"], ["y"], name="add")]
    model = make(nodes, [io("a", [3, 4])], [io("y", [3, 5]), io("p", [3, 5])], [const("b", np.ones((4, 5))), const("c", np.ones(5))])
    graph = imported(model)
    assert run_pass(graph, "fuse_matmul_add")["fused"] == 0


def test_double_product_is_not_fused():
    nodes = [helper.make_node("MatMul", ["a", "b"], ["p"], name="mm"), helper.make_node("Add", ["p", "c"], ["y"], name="add")]
    model = make(nodes, [io("a", [3, 4])], [io("y", [3, 5])],
                 [numpy_helper.from_array(np.ones((4, 5)), "b"), numpy_helper.from_array(np.ones(5), "c")])
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    model.graph.output[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    graph = imported(model)
    assert run_pass(graph, "fuse_matmul_add")["fused"] == 0
