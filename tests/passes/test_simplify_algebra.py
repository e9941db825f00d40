import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc.ir import parse_graph
from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT


def const(name, array, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(array, dtype), name)


def io(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def identities_model():
    nodes = [helper.make_node("Mul", ["one", "x"], ["a"], name="mul1"),
             helper.make_node("Add", ["a", "zero"], ["b"], name="add0"),
             helper.make_node("Sub", ["b", "zero"], ["c"], name="sub0"),
             helper.make_node("Div", ["c", "one"], ["d"], name="div1"),
             helper.make_node("Add", ["d", "zeros_wide"], ["e"], name="widening"),  # broadcasts [3] up to [2,3]
             helper.make_node("Div", ["e", "four"], ["y"], name="div4")]
    inits = [const("one", 1.0), const("zero", [0.0]), const("zeros_wide", np.zeros((2, 1))), const("four", [4.0, 2.0, 0.5])]
    return make(nodes, [io("x", [3])], [io("y", [2, 3])], inits)


def test_identities_go_and_division_by_a_constant_becomes_a_multiplication():
    graph = imported(identities_model())
    did = run_pass(graph, "simplify_algebra")
    assert {k: did[k] for k in ("mul_identity", "add_identity", "sub_identity", "div_identity", "div_to_mul")} == \
        {"mul_identity": 1, "add_identity": 1, "sub_identity": 1, "div_identity": 1, "div_to_mul": 1}
    assert [n.op_type for n in graph.nodes] == ["Add", "Mul"]
    assert graph.nodes[0].inputs[0] is graph.inputs[0]  # the widening Add stays, reading x
    np.testing.assert_array_equal(graph.nodes[1].inputs[1].data, [0.25, 0.5, 2.0])


def test_identities_numerics(target, tmp_path):
    check_model(identities_model(), {"x": rand(3)}, target, tmp_path, rtol=1e-6, atol=0)


def transposes_model():
    nodes = [helper.make_node("Transpose", ["x"], ["t1"], name="t1", perm=[0, 2, 3, 1]),
             helper.make_node("Transpose", ["t1"], ["t2"], name="t2", perm=[0, 3, 1, 2]),  # undoes t1
             helper.make_node("Relu", ["t2"], ["r"], name="relu"),
             helper.make_node("Transpose", ["r"], ["t3"], name="t3", perm=[1, 0, 2, 3]),
             helper.make_node("Transpose", ["t3"], ["y"], name="t4", perm=[0, 1, 3, 2])]
    return make(nodes, [io("x", [2, 3, 4, 5])], [io("y", [3, 2, 5, 4])])


def test_consecutive_transposes_compose_and_identity_goes():
    graph = imported(transposes_model())
    did = run_pass(graph, "simplify_algebra")
    assert did["transposes_composed"] == 2 and did["identity_transpose"] == 1 and did["removed_unread"] == 2
    assert [n.op_type for n in graph.nodes] == ["Relu", "Transpose"]
    assert graph.nodes[0].inputs[0] is graph.inputs[0]
    assert graph.nodes[1].attrs["perm"] == [1, 0, 3, 2] and graph.nodes[1].outputs[0] is graph.outputs[0]


def test_transposes_numerics(target, tmp_path):
    check_model(transposes_model(), {"x": rand(2, 3, 4, 5)}, target, tmp_path, rtol=0, atol=0)


def reshapes_model():
    nodes = [helper.make_node("Flatten", ["x"], ["f"], name="flat", axis=2),
             helper.make_node("Unsqueeze", ["f", "ax0"], ["u"], name="unsq"),
             helper.make_node("Reshape", ["u", "shape"], ["r"], name="reshape"),
             helper.make_node("Squeeze", ["r", "ax0"], ["y"], name="squeeze"),
             helper.make_node("Relu", ["y"], ["ry"], name="relu"),
             helper.make_node("Reshape", ["ry", "same"], ["z"], name="noop")]
    inits = [const("ax0", [0], np.int64), const("shape", [1, 6, 4], np.int64), const("same", [6, 4], np.int64)]
    return make(nodes, [io("x", [2, 3, 2, 2])], [io("z", [6, 4])], inits)


def test_reshape_chain_collapses_to_one_reshape():
    graph = imported(reshapes_model())
    did = run_pass(graph, "simplify_algebra")
    assert did["reshapes_collapsed"] == 3 and did["identity_reshape"] == 1 and did["removed_unread"] == 3
    assert "%y:float32[6,4] = Reshape(%x, %squeeze_shape) allowzero=0  # squeeze" in text(graph)
    assert [n.op_type for n in graph.nodes] == ["Reshape", "Relu"] and graph.outputs[0] is graph.nodes[1].outputs[0]


def test_reshapes_numerics(target, tmp_path):
    check_model(reshapes_model(), {"x": rand(2, 3, 2, 2)}, target, tmp_path, rtol=0, atol=0)


def attention_scores_model(with_b_transpose=True):
    """q @ k^T (k transposed on its last two axes), then a 2-D Gemm reading a transposed A."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 1, 3, 2]),
             helper.make_node("Transpose", ["q"], ["qt"], name="qt", perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["qt", "kt"], ["s"], name="scores"),
             helper.make_node("Transpose", ["m"], ["mt"], name="mt", perm=[1, 0]),
             helper.make_node("Gemm", ["mt", "w"], ["g"], name="gemm", transB=1)]
    inits = [const("w", np.random.default_rng(0).normal(size=(2, 4)))]
    return make(nodes, [io("q", [2, 3, 4, 5]), io("k", [2, 3, 6, 4]), io("m", [4, 3])],
                [io("s", [2, 3, 5, 6]), io("g", [3, 2])], inits)


def test_last_two_axes_transposes_fold_into_matmul_and_gemm():
    graph = imported(attention_scores_model())
    did = run_pass(graph, "simplify_algebra")
    assert did["transpose_into_product"] == 3 and did["removed_unread"] == 3
    mm, gemm = graph.nodes
    assert mm.op_type == "MatMul" and mm.attrs == {"_trans_a": 1, "_trans_b": 1}
    assert [v.name for v in mm.inputs] == ["q", "k"]
    assert gemm.attrs["transA"] == 1 and gemm.attrs["transB"] == 1 and gemm.inputs[0].name == "m"


def test_transposed_products_numerics(target, tmp_path):
    model = attention_scores_model()
    check_model(model, {"q": rand(2, 3, 4, 5), "k": rand(2, 3, 6, 4), "m": rand(4, 3)}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("b_shape,perm", [((5, 4), [1, 0]), ((3, 5, 4), [0, 2, 1])])
def test_transposed_b_of_a_stacked_product(b_shape, perm, target, tmp_path):
    nodes = [helper.make_node("Transpose", ["b"], ["bt"], name="bt", perm=perm), helper.make_node("MatMul", ["a", "bt"], ["y"], name="mm")]
    model = make(nodes, [io("a", [3, 2, 4]), io("b", list(b_shape))], [io("y", [3, 2, 5])])
    report = check_model(model, {"a": rand(3, 2, 4), "b": rand(*b_shape)}, target, tmp_path, rtol=1e-5, atol=1e-5)
    assert report["ops"] == {"MatMul": 1}


def test_transpose_of_a_constant_is_folded():
    graph = parse_graph("""graph t
  input %x:float32[3,2]
  const %c:float32[2,3] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
  %t:float32[3,2] = Transpose(%c) perm=[1,0]  # t
  %y:float32[3,2] = Add(%x, %t)  # add
  output %y
""")
    assert run_pass(graph, "simplify_algebra")["transpose_of_constant"] == 1
    assert [n.op_type for n in graph.nodes] == ["Add"]
    np.testing.assert_array_equal(graph.nodes[0].inputs[1].data, [[1, 4], [2, 5], [3, 6]])
