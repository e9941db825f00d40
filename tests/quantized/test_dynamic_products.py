"""Dynamically quantized products (onnxruntime.quantization.quantize_dynamic: DynamicQuantizeLinear ->
MatMulInteger by constant int8 weights -> Cast -> Mul by the scales -> Add of the bias) run as one
PackedIntegerMatMul step on qs8-packed (passes/fuse_integer_matmul), against onnxruntime with graph
optimisation off: a ReLU perceptron, whose float arithmetic between the products is exact, bit for bit (scales
per output column, its rows varying at run time); a one-layer BERT-like encoder (LayerNorm, Softmax and
erf GELU in float between them, where one float rounding that differs from onnxruntime's can move a
DynamicQuantizeLinear code) within a float tolerance and mostly bit-exact."""

import re
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mlcc import runners
from mlcc.pipeline import BuildOptions, build
from tests.golden import build_and_run, split_target
from tests.quantized.reference import reference


def _dynamic(model: onnx.ModelProto, per_channel: bool) -> onnx.ModelProto:
    from onnxruntime import quantization as q

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "f.onnx", Path(tmp) / "q.onnx"
        onnx.save(model, str(src))
        q.quantize_dynamic(str(src), str(dst), per_channel=per_channel, weight_type=q.QuantType.QInt8)
        return onnx.load(str(dst))


def relu_mlp(rows: tuple) -> onnx.ModelProto:
    """24 -> 40 -> 20 -> 10 on `rows` (columns past a 16-column panel, k not a multiple of 16)."""
    rng = np.random.default_rng(5)
    nodes, inits, x = [], [], "x"
    for i, (k, n) in enumerate([(24, 40), (40, 20), (20, 10)]):
        inits += [numpy_helper.from_array((rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), f"b{i}")]
        nodes += [helper.make_node("MatMul", [x, f"w{i}"], [f"m{i}"]), helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"])]
        x = f"a{i}"
        if i < 2:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
    graph = helper.make_graph(nodes, "relu_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [*rows, 24])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [*rows, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _packed_calls(tmp_path: Path, target: str) -> int:
    code = (tmp_path / f"out-{target}" / "model.c").read_text()
    assert ": MatMulInteger " not in code, "a MatMulInteger step left (a scalar loop)"
    return len(re.findall(r"\bmlcc_qs8_packed_gemm_f32__\w+\(", code))


def test_rows_vary_at_run_time(target, tmp_path):
    """One build for 1..20 rows (--dim S=1..20): DynamicQuantizeLinear and the products over the run's rows, bit
    for bit at 1, 7 and 20 (one row, tiles and a remainder); the weights' scales per output column."""
    model = _dynamic(relu_mlp(rows=("S",)), per_channel=True)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    name, runner = split_target(target)
    out_dir, _ = build(path, BuildOptions(target=name, out_dir=tmp_path / "out", dims={"S": (1, 20)}))
    loaded = runners.load(out_dir, runner=runner)
    code = (out_dir / "model.c").read_text()
    assert ": MatMulInteger " not in code and len(re.findall(r"\bmlcc_qs8_packed_gemm_f32__\w+\(", code)) == 3
    for rows in (1, 7, 20):
        feeds = {"x": np.random.default_rng(rows).standard_normal((rows, 24)).astype(np.float32)}
        got = loaded.run(feeds)
        for output, value in reference(model, feeds).items():
            np.testing.assert_array_equal(got[output], value, err_msg=f"{output} at {rows} rows on {target}")


def test_bert_like_layer(target, tmp_path):
    from benchmarks.models import bert_encoder

    floats = bert_encoder(layers=1, hidden=32, seq=8, heads=2, ffn=64)
    # the query projection made an output too: it reads the model's input quantized, so it is exact
    query = next(n.output[0] for n in floats.graph.node if n.output[0].startswith("linear"))
    floats.graph.output.append(helper.make_tensor_value_info(query, TensorProto.FLOAT, [1, 8, 32]))
    model = _dynamic(floats, per_channel=False)
    feeds = {"input": np.random.default_rng(4).standard_normal((1, 8, 32)).astype(np.float32)}
    got, _ = build_and_run(model, feeds, target, tmp_path)
    assert _packed_calls(tmp_path, target) == 6  # Q, K, V, the output projection and the FFN's two
    want = reference(model, feeds)
    np.testing.assert_array_equal(got[query], want[query], err_msg=f"{query} on {target}")
    # after the float LayerNorm, Softmax and GELU, whose roundings differ from onnxruntime's now and then
    for name, value in want.items():
        diff = np.abs(got[name] - value)
        assert diff.max() <= 1e-3 * np.abs(value).max(), f"{name} on {target}: max abs err {diff.max():.3g}"
