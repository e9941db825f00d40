"""Ops at run-time extents: one artifact built with a dimension S in a range (`--dim S=MIN..MAX`), run at
several sizes inside it and compared with onnxruntime at each, on every test target; ops that cannot take a
run-time extent yet are refused with one error naming the op and the dim."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc.errors import UnsupportedError
from mlcc.pipeline import BuildOptions, compile_model
from tests.golden import check_sizes
from tests.web_runners import needs_node

SIZES = [1, 6, 24]  # the bounds and one between
DIMS = {"S": (1, 24)}


def model(nodes, inputs: dict, outputs: list[str], initializers: dict | None = None, opset: int = 17) -> onnx.ModelProto:
    """A graph whose inputs have symbolic dims: inputs maps name -> (element type, shape with "S" where it
    varies); the outputs are float32 of inferred shape."""
    graph = helper.make_graph(
        nodes, "variable_extents",
        [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in (initializers or {}).items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)


def floats(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


F = TensorProto.FLOAT


def test_matmul_rows_vary_b_constant(target, tmp_path):
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": (F, [1, "S", 16])}, ["y"], {"w": floats(16, 8)})
    check_sizes(m, lambda s: {"x": floats(1, s, 16)}, SIZES, target, tmp_path, dims=DIMS)


def test_matmul_batched_rows_and_columns_vary(target, tmp_path):
    """Q K^T over run-time operands: m and n are S, B is packed at run time."""
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": (F, [2, "S", 8]), "b": (F, [2, 8, "S"])}, ["y"])
    check_sizes(m, lambda s: {"a": floats(2, s, 8), "b": floats(2, 8, s, seed=1)}, SIZES, target, tmp_path, dims=DIMS)


def test_matmul_inner_dim_varies(target, tmp_path):
    """scores x V: k is S."""
    m = model([helper.make_node("MatMul", ["p", "v"], ["y"])], {"p": (F, [3, 4, "S"]), "v": (F, [3, "S", 5])}, ["y"])
    check_sizes(m, lambda s: {"p": floats(3, 4, s), "v": floats(3, s, 5, seed=2)}, SIZES, target, tmp_path, dims=DIMS)


def test_gemm_with_bias_and_transposed_weights(target, tmp_path):
    m = model([helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1, alpha=0.5)], {"x": (F, ["S", 16])}, ["y"],
              {"w": floats(8, 16), "b": floats(8)})
    check_sizes(m, lambda s: {"x": floats(s, 16)}, SIZES, target, tmp_path, dims=DIMS)


def test_broadcast_elementwise_and_outer_product(target, tmp_path):
    nodes = [helper.make_node("Add", ["x", "bias"], ["t"]), helper.make_node("Relu", ["t"], ["r"]),
             helper.make_node("Unsqueeze", ["r", "axis2"], ["col"]), helper.make_node("Unsqueeze", ["r", "axis1"], ["row"]),
             helper.make_node("Mul", ["col", "row"], ["y"])]
    m = model(nodes, {"x": (F, ["S", 4])}, ["y"],
              {"bias": floats(4), "axis1": np.array([0], np.int64), "axis2": np.array([1], np.int64)})
    check_sizes(m, lambda s: {"x": floats(s, 4)}, SIZES, target, tmp_path, dims=DIMS)


@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_along_and_across_the_varying_axis(axis, target, tmp_path):
    m = model([helper.make_node("Softmax", ["x"], ["y"], axis=axis)], {"x": (F, [2, "S", "S"])}, ["y"])
    check_sizes(m, lambda s: {"x": floats(2, s, s)}, SIZES, target, tmp_path, dims=DIMS)


def test_layer_normalization_rows_vary(target, tmp_path):
    m = model([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)],
              {"x": (F, [1, "S", 16])}, ["y"], {"g": floats(16), "b": floats(16, seed=3)})
    check_sizes(m, lambda s: {"x": floats(1, s, 16)}, SIZES, target, tmp_path, dims=DIMS)


def test_embedding_gather_and_positions(target, tmp_path):
    """Word embeddings by run-time ids plus position embeddings sliced to the sequence (Shape -> Gather ->
    Slice folded at build time: a constant read as far as the size reaches)."""
    nodes = [helper.make_node("Gather", ["table", "ids"], ["words"]),
             helper.make_node("Shape", ["ids"], ["shape"]),
             helper.make_node("Gather", ["shape", "one"], ["length"], axis=0),
             helper.make_node("Slice", ["positions", "zero", "length", "zero"], ["pos"]),
             helper.make_node("Add", ["words", "pos"], ["y"])]
    m = model(nodes, {"ids": (TensorProto.INT64, [1, "S"])}, ["y"],
              {"table": floats(50, 8), "positions": floats(24, 8, seed=4), "zero": np.array([0], np.int64),
               "one": np.array([1], np.int64)})
    check_sizes(m, lambda s: {"ids": np.arange(s, dtype=np.int64)[None, :] * 7 % 50}, SIZES, target, tmp_path, dims=DIMS)


def test_split_heads_by_shape_arithmetic(target, tmp_path):
    """Shape -> Gather -> Concat -> Reshape (integer code of S), then Transpose: a transformer's head split."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "first_two"], ["lead"], axis=0),
             helper.make_node("Concat", ["lead", "heads"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["split"]),
             helper.make_node("Transpose", ["split"], ["y"], perm=[0, 2, 1, 3])]
    m = model(nodes, {"x": (F, [1, "S", 16])}, ["y"],
              {"first_two": np.array([0, 1], np.int64), "heads": np.array([4, 4], np.int64)})
    check_sizes(m, lambda s: {"x": floats(1, s, 16)}, SIZES, target, tmp_path, dims=DIMS)


def test_mask_from_ids_cast_and_where(target, tmp_path):
    nodes = [helper.make_node("Cast", ["mask"], ["keep"], to=TensorProto.BOOL),
             helper.make_node("Where", ["keep", "x", "fill"], ["y"])]
    m = model(nodes, {"mask": (TensorProto.INT64, [1, "S"]), "x": (F, [3, "S"])}, ["y"], {"fill": np.float32(-1e4)})
    rng = np.random.default_rng(5)
    check_sizes(m, lambda s: {"mask": rng.integers(0, 2, (1, s)).astype(np.int64), "x": floats(3, s)}, SIZES,
                target, tmp_path, dims=DIMS)


def test_range_in_a_shape_and_two_variables(target, tmp_path):
    """A range given inside --shape (named after the model's dim_param) next to a --dim range: two variables."""
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": (F, ["M", 6]), "b": (F, [6, "N"])}, ["y"])
    report = check_sizes(m, lambda s: {"a": floats(s[0], 6), "b": floats(6, s[1], seed=6)}, [(1, 9), (5, 2), (8, 9)],
                         target, tmp_path, dims={"M": (1, 8)}, shapes={"b": (6, (2, 9))})
    assert [(d["name"], d["min"], d["max"]) for d in report["dims"]] == [("M", 1, 8), ("N", 2, 9)]
    assert report["outputs"][0]["dims"] == ["M", "N"] and report["outputs"][0]["shape"] == [8, 9]


@pytest.mark.parametrize("reverse", [0, 1])
def test_cumsum_along_the_varying_axis(reverse, target, tmp_path):
    """RoBERTa's position ids: a running count of the mask along the sequence."""
    m = model([helper.make_node("CumSum", ["x", "axis"], ["y"], reverse=reverse)], {"x": (F, [2, "S", 3])}, ["y"],
              {"axis": np.array(1, np.int64)})
    check_sizes(m, lambda s: {"x": floats(2, s, 3)}, SIZES, target, tmp_path, dims=DIMS)


def test_gather_elements_by_run_time_indices(target, tmp_path):
    nodes = [helper.make_node("Cast", ["ids"], ["k"], to=TensorProto.INT64),
             helper.make_node("GatherElements", ["table", "k"], ["g"], axis=1),
             helper.make_node("Cast", ["g"], ["y"], to=TensorProto.FLOAT)]
    m = model(nodes, {"ids": (F, [2, "S"])}, ["y"], {"table": np.arange(60, dtype=np.int64).reshape(2, 30) * 3})
    check_sizes(m, lambda s: {"ids": np.arange(2 * s, dtype=np.float32).reshape(2, s) % 31 - 2}, SIZES, target, tmp_path,
                dims=DIMS)


def test_an_op_without_run_time_extents_is_refused_naming_op_and_dim(tmp_path):
    m = model([helper.make_node("Hardmax", ["x"], ["y"], axis=-1)], {"x": (F, [2, "S"])}, ["y"])
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    with pytest.raises(UnsupportedError, match=r"Hardmax cannot take a run-time extent yet: dim 1 of 'x' is S \(S in 1\.\.24\)"):
        compile_model(path, BuildOptions(dims=DIMS, compile=False))


def test_sizes_outside_the_range_touch_nothing(target, tmp_path):
    """NAME_run_dims refuses a size outside its range with MLCC_ERROR_DIM_RANGE (4) before reading or writing
    anything (called below the runner's own check), and the runner refuses it with one error."""
    from mlcc import runners
    from mlcc.errors import RunError
    from mlcc.pipeline import build
    from tests.golden import split_target

    m = model([helper.make_node("Relu", ["x"], ["y"])], {"x": (F, ["S", 4])}, ["y"])
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    name, runner = split_target(target)
    out_dir, _ = build(path, BuildOptions(target=name, out_dir=tmp_path / "out", dims={"S": (2, 24)}))
    loaded = runners.load(out_dir, runner=runner)
    for size in (1, 25, 0):
        sentinel = np.full(24 * 4, 7.0, np.float32)
        status, _ = loaded._invoke_dims([floats(24, 4)], [sentinel], [size])
        assert status == 4 and (sentinel == 7.0).all(), (size, status)
    status, shapes = loaded._invoke_dims([floats(3, 4)], [sentinel], [3])
    assert status == 0 and shapes == [3, 4] and (sentinel[12:] == 7.0).all()
    with pytest.raises(RunError, match=r"input 'x' dim 0 is 25: S must be within 2\.\.24"):
        loaded.run({"x": floats(25, 4)})


@needs_node
def test_es_module_takes_sizes_and_refuses_out_of_range(tmp_path):
    """NAME.mjs of a wasm32 build: run(feeds) reads S off an input's length, run(feeds, sizes) takes it, outputs
    come back at their shapes, and a size outside the range throws a RangeError before anything runs; the node
    runner passes the sizes through it."""
    from mlcc.pipeline import build

    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": (F, [1, "S", 4])}, ["y"], {"w": floats(4, 3)})
    path = tmp_path / "m.onnx"
    onnx.save(m, str(path))
    out_dir, _ = build(path, BuildOptions(target="wasm32", out_dir=tmp_path / "out", name="mm", dims={"S": (2, 24)}))
    script = tmp_path / "check.mjs"
    script.write_text(f"""
import {{ load, shapes }} from {json.dumps((out_dir / 'mm.mjs').as_uri())};
const model = await load();
const x = Float32Array.from({{ length: 20 }}, (_, i) => i / 7);
const y = model.run({{ x }}).y;
const again = model.run({{ x: x.subarray(0, 8) }}, {{ S: 2 }}).y;
let refused = "";
try {{ model.run({{ x: new Float32Array(100) }}); }} catch (e) {{ refused = `${{e.constructor.name}}: ${{e.message}}`; }}
console.log(JSON.stringify({{ y: Array.from(y), again: Array.from(again), shape: shapes({{ S: 5 }}).y, refused }}));
""")
    result = json.loads(subprocess.run(["node", str(script)], capture_output=True, text=True, check=True).stdout)
    x = (np.arange(20, dtype=np.float32) / 7).reshape(1, 5, 4)
    w = m.graph.initializer[0]
    expected = x @ numpy_helper.to_array(w)
    np.testing.assert_allclose(np.array(result["y"]).reshape(1, 5, 3), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(result["again"]).reshape(1, 2, 3), expected[:, :2], rtol=1e-5, atol=1e-6)
    assert result["shape"] == [1, 5, 3] and result["refused"] == "RangeError: mm: S is 25, outside its range 2..24"
    (tmp_path / "node").mkdir()
    check_sizes(m, lambda s: {"x": floats(1, s, 4)}, [2, 9], "wasm32@node", tmp_path / "node", dims={"S": (2, 24)})


@pytest.mark.parametrize("group", [1, 3])
def test_convolutions_over_run_time_height_and_width(group, target, tmp_path):
    """A fully convolutional stack (stride 1, padded: the spatial sizes stay H and W), channels-last on the
    targets that choose it: the geometry is filled on each run, im2col chunks are cut for the largest image."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[2, 2, 2, 2], dilations=[2, 2], group=group),
             helper.make_node("Add", ["c2", "r1"], ["y"])]
    m = model(nodes, {"x": (F, [1, 3, "H", "W"])}, ["y"],
              {"w1": floats(6, 3, 3, 3), "b1": floats(6), "w2": floats(6, 6 // group, 3, 3, seed=7)})
    check_sizes(m, lambda s: {"x": floats(1, 3, *s)}, [(5, 5), (7, 16), (16, 9), (16, 16)], target, tmp_path,
                rtol=1e-4, atol=1e-4, dims={"H": (5, 16), "W": (5, 16)})


def test_strided_convolution_sizes_are_floor_divisions(target, tmp_path):
    """A stride-2 layer's output is (H - 1) // 2 + 1: Conv's own shape inference over the run-time sizes
    (mlcc/extents.py), written as size_t division in the geometry and in the output shapes."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["y"], pads=[1, 1, 1, 1])]
    m = model(nodes, {"x": (F, [1, 3, "H", "W"])}, ["y"], {"w1": floats(8, 3, 3, 3), "w2": floats(4, 8, 3, 3, seed=8)})
    report = check_sizes(m, lambda s: {"x": floats(1, 3, *s)}, [(9, 9), (10, 17), (24, 13), (24, 24)], target, tmp_path,
                         rtol=1e-4, atol=1e-4, dims={"H": (9, 24), "W": (9, 24)})
    assert report["outputs"][0]["dims"] == [1, 4, "(H-1)//2+1", "(W-1)//2+1"]
    if target == "wasm32" and shutil.which("node"):  # the ES module computes the same shapes in JavaScript
        (tmp_path / "node").mkdir()
        check_sizes(m, lambda s: {"x": floats(1, 3, *s)}, [(10, 17)], "wasm32@node", tmp_path / "node",
                    rtol=1e-4, atol=1e-4, dims={"H": (9, 24), "W": (9, 24)})


def test_recurrent_ops_over_a_run_time_sequence(target, tmp_path):
    """The time loop and the input projections of every step take the run's length: a reverse GRU and a
    bidirectional RNN (layout 0: onnxruntime runs no other)."""
    hidden, gru_gates = 5, 3
    nodes = [helper.make_node("GRU", ["a", "gw", "gr", "gb"], ["gy", "gh"], hidden_size=hidden, direction="reverse",
                              linear_before_reset=1),
             helper.make_node("RNN", ["b", "rw", "rr"], ["ry", "rh"], hidden_size=hidden, direction="bidirectional")]
    m = model(nodes, {"a": (F, ["S", 2, 4]), "b": (F, ["S", 1, 3])}, ["gy", "gh", "ry", "rh"],
              {"gw": floats(1, gru_gates * hidden, 4), "gr": floats(1, gru_gates * hidden, hidden, seed=1),
               "gb": floats(1, 2 * gru_gates * hidden, seed=2), "rw": floats(2, hidden, 3, seed=3),
               "rr": floats(2, hidden, hidden, seed=4)})
    check_sizes(m, lambda s: {"a": floats(s, 2, 4), "b": floats(s, 1, 3, seed=5)}, SIZES, target, tmp_path,
                rtol=1e-4, atol=1e-5, dims=DIMS)


def test_pool_loops_and_reductions_over_a_run_time_width(target, tmp_path):
    """What the f32-pool kernels do not do, as plain loops over run-time extents: a ceil_mode MaxPool with
    Indices and an 8-bit one; reductions along the varying axis (a mean divides by the run's count) and
    across it (LogSumExp's peaks and sums are rows of the run's width)."""
    nodes = [helper.make_node("MaxPool", ["x"], ["p", "at"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              ceil_mode=1),
             helper.make_node("MaxPool", ["u"], ["q"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
             helper.make_node("ReduceMean", ["x"], ["mean"], axes=[3], keepdims=0),
             helper.make_node("ReduceLogSumExp", ["x"], ["lse"], axes=[2])]
    m = model(nodes, {"x": (F, [1, 2, 8, "S"]), "u": (TensorProto.UINT8, [1, 1, 6, "S"])}, ["p", "mean", "lse"])
    m.graph.output.extend([helper.make_tensor_value_info("at", TensorProto.INT64, None),
                           helper.make_tensor_value_info("q", TensorProto.UINT8, None)])
    m = onnx.shape_inference.infer_shapes(m)

    def feeds(s):
        return {"x": floats(1, 2, 8, s), "u": np.random.default_rng(s).integers(0, 256, (1, 1, 6, s), dtype=np.uint8)}
    check_sizes(m, feeds, [2, 7, 24], target, tmp_path, rtol=1e-5, atol=1e-5, dims={"S": (2, 24)})


def test_slices_of_a_varying_axis_are_copies(target, tmp_path):
    """x[:, 1:] * x[:, :-1]: at the maximum the first slice would be a view 4 bytes in and the second a view at
    0, neither the same range at another size, so both run as copies whose counts are S - 1."""
    big = np.iinfo(np.int64).max
    nodes = [helper.make_node("Slice", ["x", "one", "end", "axis"], ["tail"]),
             helper.make_node("Slice", ["x", "zero", "minus_one", "axis"], ["head"]),
             helper.make_node("Mul", ["tail", "head"], ["y"])]
    m = model(nodes, {"x": (F, [2, "S"])}, ["y"],
              {"one": np.array([1], np.int64), "end": np.array([big], np.int64), "axis": np.array([1], np.int64),
               "zero": np.array([0], np.int64), "minus_one": np.array([-1], np.int64)})
    check_sizes(m, lambda s: {"x": floats(2, s)}, [2, 7, 24], target, tmp_path, dims={"S": (2, 24)})


def test_causal_mask_folded_to_a_corner_and_concat_split_of_varying_tensors(target, tmp_path):
    """GPT-2's causal mask: a stored [24, 24] table sliced to [S, S] by shape arithmetic folds, at each size,
    to the maximum's leading corner (not a prefix), which the build copies out at run time; then a Concat of
    two varying tensors and a Split of the result into equal halves, both along a varying axis, run as copies."""
    nodes = [helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["s"], axis=0),
             helper.make_node("Concat", ["s", "s"], ["ends"], axis=0),
             helper.make_node("Slice", ["table", "zeros", "ends"], ["mask"]),
             helper.make_node("Add", ["x", "mask"], ["scores"]),
             helper.make_node("Concat", ["scores", "x"], ["both"], axis=0),
             helper.make_node("Split", ["both"], ["left", "right"], axis=0),
             helper.make_node("Mul", ["left", "right"], ["y"])]
    m = model(nodes, {"x": (F, ["S", "S"])}, ["y"],
              {"table": np.tril(np.ones((24, 24), np.float32)) * 2 - 1, "zero": np.array([0], np.int64),
               "zeros": np.array([0, 0], np.int64)})
    check_sizes(m, lambda s: {"x": floats(s, s)}, [2, 9, 24], target, tmp_path, dims={"S": (2, 24)})


def test_kv_cache_step_from_an_empty_past(target, tmp_path):
    """One attention step of a decoder with a key cache whose past length P runs from 0: the new key joins
    the past along the varying axis (a Concat whose first input is empty at P = 0), the new token's position
    id is shape arithmetic (P) read as data by the position Gather (folded at build time, so computed at run
    time instead), and its row of a stored causal mask with a position bias is a Slice starting at P (as older
    exports of GPT-2 cut their mask); one query against P + 1 keys."""
    nodes = [helper.make_node("Concat", ["past", "new"], ["keys"], axis=1),
             helper.make_node("Shape", ["keys"], ["shape"]),
             helper.make_node("Gather", ["shape", "one"], ["total"], axis=0),
             helper.make_node("Sub", ["total", "one"], ["position"]),
             helper.make_node("Gather", ["wpe", "position"], ["embedding"], axis=0),
             helper.make_node("Add", ["new", "embedding"], ["query"]),
             helper.make_node("Concat", ["position", "zero"], ["starts"], axis=0),
             helper.make_node("Concat", ["total", "total"], ["ends"], axis=0),
             helper.make_node("Slice", ["table", "starts", "ends"], ["mask"]),
             helper.make_node("Transpose", ["keys"], ["keys_t"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["query", "keys_t"], ["scores"]),
             helper.make_node("Add", ["scores", "mask"], ["masked"]),
             helper.make_node("Softmax", ["masked"], ["weights"], axis=-1),
             helper.make_node("MatMul", ["weights", "keys"], ["y"])]
    m = model(nodes, {"past": (F, [1, "P", 8]), "new": (F, [1, 1, 8])}, ["y", "keys"],
              {"wpe": floats(16, 8, seed=3), "table": (np.tril(np.ones((16, 16), np.float32)) - 1) * 1e4 + floats(16, 16),
               "one": np.array([1], np.int64), "zero": np.array([0], np.int64)})
    report = check_sizes(m, lambda p: {"past": floats(1, p, 8), "new": floats(1, 1, 8, seed=p)}, [0, 1, 6, 15],
                         target, tmp_path, dims={"P": (0, 15)})
    assert report["outputs"][1]["dims"] == [1, "P+1", 8] and report["ops"]["SizeValues"] == 1
    assert report["extents"]["unfolded_nodes"] == 2  # the position embedding's Gather, the mask's Slice
