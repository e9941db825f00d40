"""Frontend contracts: what loads, what becomes a constant, what is inlined, what is refused."""

import logging

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend
from mlcc.errors import MlccError, NeedsConstantError, ShapeError, UnsupportedError, UsageError
from tests.golden import check_model

F = TensorProto.FLOAT


def test_local_function_is_inlined(tmp_path):
    # what torch.onnx's dynamo exporter emits: model-local functions called from the main graph
    fn = helper.make_function("custom.local", "ScaledRelu", ["X", "S"], ["Y"],
                              [helper.make_node("Mul", ["X", "S"], ["T"]), helper.make_node("Relu", ["T"], ["Y"])],
                              [helper.make_opsetid("", 17)])
    graph = helper.make_graph([helper.make_node("ScaledRelu", ["x", "s"], ["y"], domain="custom.local", name="call")],
                              "f", [helper.make_tensor_value_info("x", F, [2, 3])], [helper.make_tensor_value_info("y", F, [2, 3])],
                              [numpy_helper.from_array(np.float32(2.0).reshape(()), "s")])
    model = helper.make_model(graph, functions=[fn],
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom.local", 1)])
    model.ir_version = 8
    path = tmp_path / "f.onnx"
    onnx.save(model, str(path))
    loaded = frontend.load_model(path)
    g = frontend.import_model(loaded)
    assert sorted(n.op_type for n in g.nodes) == ["Mul", "Relu"]
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    check_model(model, {"x": x}, "host", tmp_path, expected={"y": np.maximum(2 * x, 0)})


def test_external_data_inside_the_folder_loads(tmp_path):
    w = np.arange(4, dtype=np.float32)
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "e", [helper.make_tensor_value_info("x", F, [4])],
        [helper.make_tensor_value_info("y", F, [4])], [numpy_helper.from_array(w, "w")]),
        opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.data", size_threshold=0)
    g = frontend.import_model(frontend.load_model(tmp_path / "m.onnx"))
    np.testing.assert_array_equal(g.nodes[0].inputs[1].data, w)


def test_graph_input_with_initializer_is_a_constant():
    w = numpy_helper.from_array(np.ones(3, np.float32), "w")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", F, [3]), helper.make_tensor_value_info("w", F, [3])],
                              [helper.make_tensor_value_info("y", F, [3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    model.ir_version = 4
    g = frontend.import_model(model)
    assert [v.name for v in g.inputs] == ["x"]
    assert g.nodes[0].inputs[1].is_const


def test_opset_out_of_range_is_refused():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", F, [3])],
                              [helper.make_tensor_value_info("y", F, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 99)])
    with pytest.raises(UnsupportedError, match="opset 99"):
        frontend.import_model(model)


def test_frozen_input_becomes_a_constant():
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "s"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(NeedsConstantError, match="--freeze s="):
        frontend.import_model(model)
    g = frontend.import_model(model, frontend.ShapeOverrides(frozen={"s": np.array([3, 2])}))
    assert [v.name for v in g.inputs] == ["x"] and g.outputs[0].shape == (3, 2)
    with pytest.raises(UsageError, match="3 values given"):
        frontend.import_model(model, frontend.ShapeOverrides(frozen={"s": np.array([3, 2, 1])}))


def test_every_value_is_typed_and_static():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Add", ["a", "x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", F, ["n", 3])], [helper.make_tensor_value_info("y", F, ["n", 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ShapeError, match="--dim n=N"):
        frontend.import_model(model)
    g = frontend.import_model(model, frontend.ShapeOverrides(dims={"n": 5}))
    g.verify()
    assert all(v.shape == (5, 3) for v in g.values())


def test_errors_are_mlcc_errors_with_a_where(tmp_path):
    path = tmp_path / "x.onnx"
    path.write_bytes(b"\x08\x07garbage")
    with pytest.raises(MlccError) as err:
        frontend.load_model(path)
    assert "x.onnx" in str(err.value)


def test_empty_constant_output_compiles(tmp_path, target):
    # Shape with start > end is an empty constant output; with no weights at all the blob is absent
    graph = helper.make_graph([helper.make_node("Shape", ["x"], ["s"], start=2, end=1), helper.make_node("Relu", ["x"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info("s", TensorProto.INT64, [0]), helper.make_tensor_value_info("y", F, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    check_model(model, {"x": x}, target, tmp_path)


@pytest.mark.parametrize("free", [-1, 0])
def test_free_dim_value_is_set_by_shape(free, tmp_path, target):
    # PaddlePaddle writes a dynamic dim as dim_value -1 (some exporters 0): --shape sets it, a fixed dim still holds
    graph = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "g",
                              [helper.make_tensor_value_info("x", F, [free, 3, free])],
                              [helper.make_tensor_value_info("y", F, [free, 3, free])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = np.random.default_rng(0).standard_normal((2, 3, 5)).astype(np.float32)
    check_model(model, {"x": x}, target, tmp_path, shapes={"x": (2, 3, 5)})  # onnxruntime runs it with the dims as symbols
    with pytest.raises(UsageError, match="contradicts the model's fixed 3"):
        frontend.import_model(model, frontend.ShapeOverrides(shapes={"x": (2, 4, 5)}))
    if free < 0:
        with pytest.raises(ShapeError, match=r"dim 0 is free \(-1\); give --shape x="):
            frontend.import_model(model)


def test_every_unsupported_op_is_listed_at_once():
    # unknown ops at the top (one unnamed) and in both branches of an If: all named in one error
    branch = helper.make_graph([helper.make_node("NoSuchOpC", ["x"], ["t"], name="inner")], "then", [],
                               [helper.make_tensor_value_info("t", F, [2])])
    other = helper.make_graph([helper.make_node("NoSuchOpD", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", F, [2])])
    nodes = [helper.make_node("NoSuchOpA", ["x"], ["a"]),
             helper.make_node("Relu", ["a"], ["b"], name="relu"),
             helper.make_node("NoSuchOpB", ["b"], ["c"], name="second", domain="com.example"),
             helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=other)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, [2]),
                                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", F, [2]), helper.make_tensor_value_info("c", F, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    with pytest.raises(UnsupportedError) as err:
        frontend.import_model(model)
    assert str(err.value) == ("unsupported operator(s): NoSuchOpA in node 'NoSuchOpA_0', NoSuchOpB (com.example) in "
                              "node 'second', NoSuchOpD in node 'If_3/else_branch/NoSuchOpD_0', NoSuchOpC in node 'inner'")


def _relu_declaring(elem_type, shape) -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info("y", elem_type, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_declared_output_type_contradicting_the_graph_is_an_error():
    with pytest.raises(ShapeError, match="graph output 'y': is declared int32 but the graph computes float32"):
        frontend.import_model(_relu_declaring(TensorProto.INT32, [2, 3]))


@pytest.mark.parametrize("declared,shown", [([3, 2], "[3, 2]"), ([2, 3, 1], "[2, 3, 1]")])
def test_declared_output_shape_contradicting_the_graph_is_a_warning(declared, shown, caplog):
    with caplog.at_level(logging.WARNING, logger="mlcc"):
        graph = frontend.import_model(_relu_declaring(F, declared))
    assert graph.outputs[0].shape == (2, 3)  # as onnxruntime runs it
    assert f"graph output 'y': is declared with shape {shown} but the graph computes [2, 3]" in caplog.text


def test_declared_output_free_dims_take_the_computed_ones():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info("y", F, ["batch", -1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert frontend.import_model(model).outputs[0].shape == (2, 3)
