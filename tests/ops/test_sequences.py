"""Sequence ops with lengths known at build time, compiled away into plain tensors (mlcc/sequences.py), against
onnxruntime on every target: no sequence op is left in the built model."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend
from mlcc.errors import NeedsConstantError, UnsupportedError
from tests.golden import check_model, rand

F, I64 = TensorProto.FLOAT, TensorProto.INT64
EXACT = {"rtol": 0.0, "atol": 0.0}


def model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(np.asarray(a), n) for n, a in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def check(m, feeds, target, tmp_path, **tol):
    report = check_model(m, feeds, target, tmp_path, **(tol or EXACT))
    assert not [op for op in report["ops"] if "Sequence" in op], report["ops"]
    return report


def test_split_to_sequence_and_at(target, tmp_path):
    # what torch.onnx's dynamo exporter writes for torch.unbind / tensor.split with optimize=False
    nodes = [helper.make_node("SplitToSequence", ["x"], ["rows"], axis=1, keepdims=0),
             helper.make_node("SequenceAt", ["rows", "one"], ["a"]),
             helper.make_node("SequenceAt", ["rows", "last"], ["b"]),
             helper.make_node("Mul", ["a", "b"], ["y"]),
             helper.make_node("SplitToSequence", ["x", "two"], ["chunks"], axis=2),  # 5 -> 2, 2, 1
             helper.make_node("SequenceAt", ["chunks", "last"], ["tail"]),
             helper.make_node("SplitToSequence", ["x", "sizes"], ["parts"], axis=-1),
             helper.make_node("ConcatFromSequence", ["parts"], ["z"], axis=-1)]
    inits = [("one", np.array(1, np.int64)), ("last", np.array(-1, np.int64)), ("two", np.array(2, np.int64)),
             ("sizes", np.array([1, 4], np.int64))]
    m = model(nodes, [tensor("x", [2, 3, 5])], [tensor("y", [2, 5]), tensor("tail", [2, 3, 1]), tensor("z", [2, 3, 5])], inits)
    check(m, {"x": rand(2, 3, 5)}, target, tmp_path)


def test_build_a_sequence_then_concat(target, tmp_path):
    nodes = [helper.make_node("SequenceEmpty", [], ["s0"], dtype=F),
             helper.make_node("SequenceInsert", ["s0", "a"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "b"], ["s2"]),
             helper.make_node("SequenceInsert", ["s2", "c", "zero"], ["s3"]),  # c, a, b
             helper.make_node("SequenceConstruct", ["b", "a"], ["t"]),
             helper.make_node("SequenceErase", ["s3", "one"], ["s4"]),  # c, b
             helper.make_node("SequenceErase", ["t"], ["t1"]),  # b
             helper.make_node("SequenceLength", ["s3"], ["n"]),
             helper.make_node("ConcatFromSequence", ["s4"], ["stacked"], axis=-1, new_axis=1),
             helper.make_node("ConcatFromSequence", ["t1"], ["alone"], axis=0)]
    m = model(nodes, [tensor("a", [2, 3]), tensor("b", [2, 3]), tensor("c", [2, 3])],
              [tensor("stacked", [2, 3, 2]), tensor("n", [], I64), tensor("alone", [2, 3])],
              [("zero", np.array(0, np.int64)), ("one", np.array(1, np.int64))])
    check(m, {"a": rand(2, 3, seed=1), "b": rand(2, 3, seed=2), "c": rand(2, 3, seed=3)}, target, tmp_path)


def test_sequence_map(target, tmp_path):
    body = helper.make_graph([helper.make_node("Mul", ["e", "w"], ["p"]), helper.make_node("Relu", ["p"], ["r"])], "body",
                             [tensor("e", None), tensor("w", [3])], [tensor("r", None)])
    nodes = [helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
             helper.make_node("SequenceMap", ["rows", "w"], ["mapped"], body=body),
             helper.make_node("ConcatFromSequence", ["mapped"], ["y"], axis=-1, new_axis=1)]
    m = model(nodes, [tensor("x", [4, 3]), tensor("w", [3])], [tensor("y", [3, 4])])
    check(m, {"x": rand(4, 3), "w": rand(3, seed=5)}, target, tmp_path)


def test_run_time_position_names_the_input_to_freeze():
    nodes = [helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
             helper.make_node("SequenceAt", ["rows", "i"], ["y"])]
    m = model(nodes, [tensor("x", [4, 3]), tensor("i", [], I64)], [tensor("y", [3])])
    with pytest.raises(NeedsConstantError, match="--freeze"):
        frontend.import_model(m)


def test_sequence_graph_output_is_refused():
    m = model([helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0)], [tensor("x", [4, 3])],
              [helper.make_value_info("rows", helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None)))])
    with pytest.raises(UnsupportedError, match="graph output 'rows' is a sequence"):
        frontend.import_model(m)
