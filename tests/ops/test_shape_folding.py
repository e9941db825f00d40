"""Ops whose outputs are known at build time (Shape, Size, Constant, and Range/ConstantOfShape on constant
inputs): they fold to weights, so shape computations cost nothing at run time. Checked through the report's
op counts and against onnxruntime on every target."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend
from mlcc.errors import ShapeError
from tests.golden import build_and_run, check_model, node_model, rand

EXACT = {"rtol": 0.0, "atol": 0.0}


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "folding", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def tensor(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def test_shape_gather_concat_reshape_folds(target, tmp_path):
    # y = x.reshape(x.shape[0], -1): the pattern every PyTorch export of `flatten` makes
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [const("zero", np.array(0, np.int64)), const("axes0", np.array([0], np.int64)),
             const("minus1", np.array([-1], np.int64))]
    m = model(nodes, [tensor("x", TensorProto.FLOAT, [2, 3, 4])], [tensor("y", TensorProto.FLOAT, [2, 12])], inits)
    x = rand(2, 3, 4)
    report = check_model(m, {"x": x}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Reshape": 1}, report["ops"]


def test_constant_of_shape_weight_folds(target, tmp_path):
    nodes = [
        helper.make_node("Constant", [], ["shape"], value_ints=[3, 4]),
        helper.make_node("ConstantOfShape", ["shape"], ["w"],
                         value=numpy_helper.from_array(np.array([0.5], np.float32))),
        helper.make_node("Add", ["x", "w"], ["y"]),
    ]
    m = model(nodes, [tensor("x", TensorProto.FLOAT, [3, 4])], [tensor("y", TensorProto.FLOAT, [3, 4])])
    x = rand(3, 4)
    report = check_model(m, {"x": x}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Add": 1}, report["ops"]


def test_constant_of_shape_is_fast_on_large_shapes():
    fill = numpy_helper.from_array(np.array([7], np.int64))
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["w"], value=fill)], [],
              [tensor("w", TensorProto.INT64, [1000, 1000, 10])], [const("shape", np.array([1000, 1000, 10], np.int64))])
    graph = frontend.import_model(m)
    w = graph.outputs[0]
    assert w.shape == (1000, 1000, 10) and w.dtype == np.int64 and w.data[0, 0, 0] == 7 and w.data[-1, -1, -1] == 7


@pytest.mark.parametrize("opset,attrs,expected", [
    (13, {}, [2, 3, 4, 5]), (15, {"start": 1, "end": -1}, [3, 4]), (15, {"start": -10}, [2, 3, 4, 5]),
])
def test_shape(opset, attrs, expected, target, tmp_path):
    x = rand(2, 3, 4, 5)
    m = node_model("Shape", {"x": x}, ["y"], attrs, opset=opset)
    report = check_model(m, {"x": x}, target, tmp_path, **EXACT)
    assert report["ops"] == {}
    assert report["outputs"][0]["shape"] == [len(expected)]


def test_size(target, tmp_path):
    x = rand(2, 3, 4)
    nodes = [helper.make_node("Size", ["x"], ["n"]), helper.make_node("Add", ["n", "k"], ["y"])]
    m = model(nodes, [tensor("x", TensorProto.FLOAT, [2, 3, 4]), tensor("k", TensorProto.INT64, [])],
              [tensor("y", TensorProto.INT64, [])])
    report = check_model(m, {"x": x, "k": np.array(5, np.int64)}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Add": 1}


@pytest.mark.parametrize("dtype,start,limit,delta", [(np.int64, 2, 11, 3), (np.float32, 1.0, -2.0, -0.5),
                                                     (np.int32, -5, 5, 7)])
def test_range_with_constant_inputs(dtype, start, limit, delta, target, tmp_path):
    x = np.zeros(1, dtype)
    count = len(np.arange(start, limit, delta))
    consts = {"start": np.array(start, dtype), "limit": np.array(limit, dtype), "delta": np.array(delta, dtype)}
    nodes = [helper.make_node("Range", ["start", "limit", "delta"], ["r"]), helper.make_node("Add", ["r", "x"], ["y"])]
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    m = model(nodes, [tensor("x", onnx_type, [1])], [tensor("y", onnx_type, [count])],
              [const(k, v) for k, v in consts.items()])
    report = check_model(m, {"x": x}, target, tmp_path, **EXACT)
    assert "Range" not in report["ops"]


def test_range_on_runtime_values_is_refused(tmp_path):
    m = model([helper.make_node("Range", ["start", "limit", "delta"], ["y"])],
              [tensor("limit", TensorProto.INT64, [])], [tensor("y", TensorProto.INT64, ["n"])],
              [const("start", np.array(0, np.int64)), const("delta", np.array(1, np.int64))])
    with pytest.raises(ShapeError, match="depends on the values of input 'limit'.*--freeze limit="):
        build_and_run(m, {"limit": np.array(4, np.int64)}, "host", tmp_path)


def test_reshape_to_runtime_shape_is_refused(tmp_path):
    x = rand(2, 6)
    m = node_model("Reshape", {"x": x, "shape": np.array([3, 4], np.int64)}, {"y": (np.float32, (3, 4))})
    with pytest.raises(ShapeError, match="computed at run time"):
        build_and_run(m, {"x": x, "shape": np.array([3, 4], np.int64)}, "host", tmp_path)


@pytest.mark.parametrize("attrs,dtype", [
    ({"value": numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))}, np.float32),
    ({"value_ints": [1, -2, 3]}, np.int64), ({"value_float": 2.5}, np.float32),
])
def test_constant(attrs, dtype, target, tmp_path):
    value = helper.make_node("Constant", [], ["c"], **attrs)
    shape = [2, 3] if "value" in attrs else [3] if "value_ints" in attrs else []
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    m = model([value, helper.make_node("Add", ["x", "c"], ["y"])], [tensor("x", onnx_type, shape)],
              [tensor("y", onnx_type, shape)])
    x = np.ones(shape, dtype)
    report = check_model(m, {"x": x}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Add": 1}


@pytest.fixture
def unfolded(monkeypatch):
    """Keep Range and ConstantOfShape nodes as code (as a pass sparing the weights blob might) to test their
    lowering: the frontend folds them, so their outputs' values are dropped again after import."""
    real = frontend.import_model

    def import_model(*args, **kwargs):
        graph = real(*args, **kwargs)
        for node in graph.nodes:
            if node.op_type in ("Range", "ConstantOfShape"):
                node.outputs[0].data = None
        return graph

    monkeypatch.setattr(frontend, "import_model", import_model)


@pytest.mark.parametrize("dtype,value", [(np.float32, 0.0), (np.float32, -1.25), (np.int64, 3), (np.bool_, True)])
def test_constant_of_shape_lowering(unfolded, dtype, value, target, tmp_path):
    onnx_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    fill = numpy_helper.from_array(np.array([value], dtype))
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["y"], value=fill)], [],
              [tensor("y", onnx_type, [3, 5])], [const("shape", np.array([3, 5], np.int64))])
    report = check_model(m, {}, target, tmp_path, **EXACT)
    assert report["ops"] == {"ConstantOfShape": 1}


@pytest.mark.parametrize("dtype,start,limit,delta", [(np.int64, -3, 20, 4), (np.float32, 0.5, 3.0, 0.25)])
def test_range_lowering(unfolded, dtype, start, limit, delta, target, tmp_path):
    count = len(np.arange(start, limit, delta))
    m = model([helper.make_node("Range", ["start", "limit", "delta"], ["y"])], [],
              [tensor("y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [count])],
              [const("start", np.array(start, dtype)), const("limit", np.array(limit, dtype)),
               const("delta", np.array(delta, dtype))])
    report = check_model(m, {}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Range": 1}


# --- folding through each op's reference, at sizes and opset versions the ONNX node cases do not reach -----
FOLDED_CASES = {
    # onnx.reference's GatherElements takes at most 64 values along the axis (np.choose): BERT's token types
    "gather_elements_512": ("GatherElements", [np.arange(512, dtype=np.int64)[None] % 7,
                                              np.arange(128, dtype=np.int64)[None] * 3], {"axis": 1}, 17),
    "gather_elements_negative": ("GatherElements", [np.arange(300, dtype=np.int64).reshape(100, 3),
                                                    (np.arange(24, dtype=np.int64).reshape(8, 3) * 37) % 200 - 100],
                                 {"axis": 0}, 13),
    "gather_elements_short_indices": ("GatherElements", [np.arange(2 * 100 * 3, dtype=np.int64).reshape(2, 100, 3),
                                                         np.arange(8, dtype=np.int64).reshape(1, 4, 2) * 11 - 40],
                                      {"axis": -2}, 11),
    # onnx.reference implements DequantizeLinear from version 19 on: 10 and 13 run as 19, which reads them alike
    "dequantize_10": ("DequantizeLinear", [np.arange(-50, 50, dtype=np.int8).reshape(4, 25),
                                           np.array(0.1, np.float32), np.array(3, np.int8)], {}, 10),
    "dequantize_13_per_axis": ("DequantizeLinear", [np.arange(-50, 50, dtype=np.int8).reshape(4, 25),
                                                    np.linspace(0.01, 0.1, 25, dtype=np.float32),
                                                    np.arange(25, dtype=np.int8) % 5], {"axis": 1}, 13),
}


@pytest.mark.parametrize("case", sorted(FOLDED_CASES))
def test_constant_inputs_fold(case, target, tmp_path):
    op, arrays, attrs, opset = FOLDED_CASES[case]
    names = [f"c{i}" for i in range(len(arrays))]
    expected_type = {"GatherElements": arrays[0].dtype}.get(op, np.dtype(np.float32))
    out_shape = arrays[1].shape if op == "GatherElements" else arrays[0].shape
    nodes = [helper.make_node(op, names, ["folded"], **attrs), helper.make_node("Add", ["folded", "x"], ["y"])]
    dtype = helper.np_dtype_to_tensor_dtype(expected_type)
    m = model(nodes, [tensor("x", dtype, out_shape)], [tensor("y", dtype, out_shape)],
              [const(n, a) for n, a in zip(names, arrays)], opset=opset)
    x = np.arange(np.prod(out_shape)).reshape(out_shape).astype(expected_type)
    report = check_model(m, {"x": x}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Add": 1}, report["ops"]


def test_bert_token_type_buffer_folds(target, tmp_path):
    # transformers' BertEmbeddings: token types gathered from a registered buffer at the position ids
    nodes = [
        helper.make_node("Slice", ["buffer", "zero", "seq", "one"], ["sliced"]),
        helper.make_node("Expand", ["sliced", "batch_shape"], ["expanded"]),
        helper.make_node("GatherElements", ["expanded", "positions"], ["token_types"], axis=1),
        helper.make_node("Gather", ["table", "token_types"], ["embedded"]),
        helper.make_node("Add", ["x", "embedded"], ["y"]),
    ]
    inits = [const("buffer", np.arange(512, dtype=np.int64)[None] % 2), const("zero", np.array([0], np.int64)),
             const("seq", np.array([128], np.int64)), const("one", np.array([1], np.int64)),
             const("batch_shape", np.array([2, 128], np.int64)),
             const("positions", np.arange(256, dtype=np.int64).reshape(2, 128) % 128),
             const("table", rand(2, 16, seed=3))]
    m = model(nodes, [tensor("x", TensorProto.FLOAT, [2, 128, 16])], [tensor("y", TensorProto.FLOAT, [2, 128, 16])], inits)
    report = check_model(m, {"x": rand(2, 128, 16)}, target, tmp_path, **EXACT)
    assert report["ops"] == {"Add": 1}, report["ops"]
