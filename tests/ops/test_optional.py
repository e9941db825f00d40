"""Golden tests of OptionalHasElement and OptionalGetElement on plain tensors and omitted inputs (mlcc's only
optionals), on every target; optional- and sequence-typed values are refused with a clear error."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from mlcc.errors import MlccError
from tests.golden import build_and_run, check_model, node_model, rand

EXACT = {"rtol": 0.0, "atol": 0.0}


def _model(nodes, inputs, outputs, opset=18):
    graph = helper.make_graph(nodes, "optional_test", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_optional_get_element_of_a_tensor(dtype, target, tmp_path):
    x = (rand(2, 3) > 0).astype(dtype) if dtype == np.bool_ else (rand(2, 3) * 10).astype(dtype)
    model = node_model("OptionalGetElement", {"x": x}, {"y": (dtype, x.shape)}, opset=18)
    check_model(model, {"x": x}, target, tmp_path, **EXACT)


def test_optional_get_element_inside_a_graph(target, tmp_path):
    # the identity is forwarded between two real ops
    x = rand(4, 5)
    t = helper.make_tensor_type_proto
    model = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("OptionalGetElement", ["r"], ["g"]),
                    helper.make_node("Neg", ["g"], ["y"])],
                   [helper.make_value_info("x", t(TensorProto.FLOAT, x.shape))],
                   [helper.make_value_info("y", t(TensorProto.FLOAT, x.shape))])
    check_model(model, {"x": x}, target, tmp_path, **EXACT)


@pytest.mark.parametrize("present", [True, False])
def test_optional_has_element(present, target, tmp_path):
    # a tensor is always there, an omitted input never: the answer is a build-time constant
    x = rand(3)
    t = helper.make_tensor_type_proto
    inputs = [helper.make_value_info("x", t(TensorProto.FLOAT, x.shape))] if present else []
    model = _model([helper.make_node("OptionalHasElement", ["x" if present else ""], ["y"])], inputs,
                   [helper.make_value_info("y", t(TensorProto.BOOL, []))])
    feeds = {"x": x} if present else {}
    check_model(model, feeds, target, tmp_path, expected={"y": np.array(present)}, **EXACT)


@pytest.mark.parametrize("kind", ["optional", "sequence"])
def test_optional_and_sequence_types_unsupported(kind, tmp_path):
    element = helper.make_tensor_type_proto(TensorProto.FLOAT, [3])
    wrapped = helper.make_optional_type_proto(element) if kind == "optional" else helper.make_sequence_type_proto(element)
    model = _model([helper.make_node("OptionalHasElement", ["x"], ["y"])], [helper.make_value_info("x", wrapped)],
                   [helper.make_value_info("y", helper.make_tensor_type_proto(TensorProto.BOOL, []))])
    with pytest.raises(MlccError, match="only tensor inputs"):
        build_and_run(model, {}, "host", tmp_path)
