"""benchmarks/layers.py: onnxruntime's nodes matched to mlcc's steps, and the comparison end to end."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from benchmarks import layers


def residual_block() -> onnx.ModelProto:
    """Conv-BN-Relu, then Conv + the first block's output, Relu: what ResNet's blocks look like."""
    rng = np.random.default_rng(0)
    c = 8
    inits = [numpy_helper.from_array(rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1, "w0"),
             numpy_helper.from_array(rng.standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1, "w3")]
    for name, value in [("scale", 1.0), ("bias", 0.1), ("mean", 0.0), ("var", 1.0)]:
        inits.append(numpy_helper.from_array(np.full(c, value, np.float32), name))
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], name="n0", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c0", "scale", "bias", "mean", "var"], ["b1"], name="n1"),
        helper.make_node("Relu", ["b1"], ["r2"], name="n2"),
        helper.make_node("Conv", ["r2", "w3"], ["c3"], name="n3", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c3", "r2"], ["a4"], name="n4"),
        helper.make_node("Relu", ["a4"], ["y"], name="n5"),
    ]
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 16, 16])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnxruntime_nodes_walk_back_to_the_step_that_fused_them():
    match = layers.step_matcher(residual_block().graph, {"n0", "n3"})
    assert match("r2_nchwc") == "n0"  # a fused Conv+BN+Relu named after its output, in the blocked layout
    assert match("y_nchwc") == "n3"  # Relu after the residual Add: the Add's own branch, not the skip
    assert match("n3") == "n3"  # a node onnxruntime left alone keeps its name
    assert match("ReorderOutput") is None  # onnxruntime's layout change: no mlcc step


def test_the_comparison_times_both_sides_of_every_layer(tmp_path):
    path = tmp_path / "block.onnx"
    onnx.save(residual_block(), str(path))
    result = layers.compare(path, None, rounds=1, warmup=1, repeat=3)
    convs = [r for r in result["rows"] if r["op"] == "Conv"]
    assert [r["step"] for r in convs] == ["n0", "n3"]
    assert all(r["mlcc_ms"] > 0 and r["ort_ms"] is not None and r["ort_ms"] > 0 for r in convs)
    assert convs[0]["shapes"] == "1x8x16x16 * 8x8x3x3 -> 1x8x16x16"
    table = layers.markdown(result, top=5)
    assert "| n3 | Conv |" in table and "| Conv 3x3 | 2 |" in table
    assert result["clock"] == "thread_cpu" and "thread's CPU time on both sides" in table


def test_bad_paths_give_one_error_line_and_exit_2(tmp_path, capsys):
    """Every argument naming a file or folder, wrong, is refused before anything is built or timed."""
    model = tmp_path / "block.onnx"
    onnx.save(residual_block(), str(model))
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    (tmp_path / "empty").mkdir()
    (tmp_path / "torn").mkdir()
    (tmp_path / "torn" / "report.json").write_text("{\"inputs\": [")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "report.json").write_text('{"inputs": [{"name": "z", "shape": [1], "dtype": "float32"}]}')
    cases = [([str(tmp_path / "missing.onnx")], "missing.onnx: no such model file"),
             ([str(tmp_path / "junk.onnx")], "junk.onnx: not a readable ONNX model"),
             ([str(model), "--build", str(tmp_path / "never-built")], "never-built holds no report.json"),
             ([str(model), "--build", str(tmp_path / "empty")], "empty holds no report.json"),
             ([str(model), "--build", str(tmp_path / "torn")], "torn: unreadable report.json"),
             ([str(model), "--build", str(tmp_path / "other")], "was built from another model"),
             ([str(model), "-t", "no-such-target"], "unknown target 'no-such-target'")]
    for argv, what in cases:
        assert layers.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1 and what in err, (argv, err)
