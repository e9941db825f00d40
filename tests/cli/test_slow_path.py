"""report.json's slow_path and `mlcc build`'s summary of it (mlcc/slow_path.py): the steps on generic code
and an int8 model's ops left in float, with their share of the model's FLOPs."""

import json

import numpy as np
import onnx
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from mlcc.cli import main
from mlcc.pipeline import BuildOptions, compile_model
from mlcc.report import build_slow_path, model_flops, step_info
from tests.passes.test_lower_quantized_islands import qdq_conv


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def integer_then_float():
    """MatMulInteger of two run-time operands (a plain loop nest: the known generic op; by constant weights it
    would run on qs8-packed) -> Cast -> Gemm (vector GEMM tiles)."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("MatMulInteger", ["a", "b"], ["p"], name="mmi"),
             helper.make_node("Cast", ["p"], ["pf"], to=TensorProto.FLOAT, name="cast"),
             helper.make_node("Gemm", ["pf", "w", "c"], ["y"], name="fc")]
    return _model(nodes, [helper.make_tensor_value_info("a", TensorProto.UINT8, [4, 16]),
                          helper.make_tensor_value_info("b", TensorProto.INT8, [16, 8])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
                  {"w": rng.standard_normal((8, 8)).astype(np.float32), "c": np.ones(8, np.float32)})


def conv_gemm():
    """Conv -> Relu -> Flatten -> Gemm: all on GEMM tiles."""
    rng = np.random.default_rng(1)
    nodes = [helper.make_node("Conv", ["x", "k", "kb"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Flatten", ["r"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "w", "wb"], ["y"], transB=1, name="fc")]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                  {"k": rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "kb": np.zeros(8, np.float32),
                   "w": rng.standard_normal((10, 512)).astype(np.float32), "wb": np.zeros(10, np.float32)})


def slow_path_of(model, target, tmp_path):
    """report.json's slow_path, without compiling C (the same functions build_report calls)."""
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    compiled = compile_model(path, BuildOptions(target=target, compile=False))
    steps = [step_info(s.node) for s in compiled.program.steps]
    return build_slow_path(compiled, steps, model_flops(compiled.graph)), steps


def test_generic_op_listed_with_its_flop_share_in_report_and_summary(tmp_path):
    onnx.save(integer_then_float(), str(tmp_path / "m.onnx"))
    # x86_64 (AVX2: what host is on any AVX2 machine), where qs8-gemm has mlcc_qs8_gemm__avx2
    result = CliRunner().invoke(main, ["build", str(tmp_path / "m.onnx"), "-t", "x86_64", "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    matmul = 2 * 4 * 8 * 16  # multiply-adds of [4, 16] x [16, 8]
    total = sum(s["flops"] for s in report["steps"])
    assert total == report["flops"] > matmul  # the Gemm counts too
    [entry] = report["slow_path"]["steps"]
    assert (entry["node"], entry["op"], entry["flops"]) == ("mmi", "MatMulInteger", matmul)
    assert entry["flop_share"] == round(matmul / total, 4) == report["slow_path"]["flop_share"]
    assert "plain C loop nest" in entry["why"] and "mlcc_qs8_gemm__avx2" in entry["why"]
    assert f"slow path: 1 step(s) giving up speed, {100 * matmul / total:.1f}% of the FLOPs" in result.output
    assert "MatMulInteger 'mmi'" in result.output


def test_conv_and_gemm_model_has_no_slow_path(tmp_path):
    slow, steps = slow_path_of(conv_gemm(), "x86_64", tmp_path)
    assert sum(s["flops"] for s in steps) > 0
    assert slow == {"flop_share": 0.0, "steps": []}


def test_everything_is_generic_on_wasm32_scalar(tmp_path):
    slow, steps = slow_path_of(conv_gemm(), "wasm32-scalar", tmp_path)
    computing = [s["node"] for s in steps if s["flops"] > 0]
    assert len(computing) >= 2 and [e["node"] for e in slow["steps"]] == computing
    assert slow["flop_share"] == 1.0
    assert all("wasm32-scalar has no" in e["why"] for e in slow["steps"])


def test_int8_op_left_in_float_is_on_the_slow_path(tmp_path):
    # weights with a zero point have no integer form: the Conv dequantizes around itself, in float
    slow, steps = slow_path_of(qdq_conv(weight_dtype=np.uint8, weight_zero=128), "x86_64", tmp_path)
    [entry] = slow["steps"]
    conv = next(s for s in steps if s["node"] == "conv")
    assert entry["node"] == "conv" and entry["flops"] == conv["flops"] > 0
    assert entry["why"] == "left in float in an int8 model: weights not symmetric int8"
    assert entry["flop_share"] == round(conv["flops"] / sum(s["flops"] for s in steps), 4)
