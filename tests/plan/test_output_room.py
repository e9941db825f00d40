"""Intermediates in the caller's output buffers (mlcc/plan/output_room.py), run against onnxruntime: a QDQ
autoencoder whose quantized input, hidden activations and quantized result all live in its float output (and
--outputs-overlap-inputs keeping them in the arena)."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from mlcc.pipeline import BuildOptions, compile_model
from tests.golden import build_and_run
from tests.quantized.reference import reference

WIDTH, HIDDEN = 64, 16


def autoencoder() -> onnx.ModelProto:
    """x[1,64] -> Q -> DQ -> MatMul(int8 W1) -> Relu -> Q -> DQ -> MatMul(int8 W2) -> Q -> DQ -> y[1,64]."""
    rng = np.random.default_rng(0)
    inits = {"w1": rng.integers(-127, 128, (WIDTH, HIDDEN)).astype(np.int8),
             "w2": rng.integers(-127, 128, (HIDDEN, WIDTH)).astype(np.int8),
             "ws": np.float32(0.01), "wz": np.int8(0), "s": np.float32(0.02), "z": np.uint8(128),
             "hs": np.float32(0.05), "hz": np.uint8(0), "ys": np.float32(0.1), "yz": np.uint8(120)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node("DequantizeLinear", ["w1", "ws", "wz"], ["w1d"]),
             helper.make_node("MatMul", ["xd", "w1d"], ["h"]), helper.make_node("Relu", ["h"], ["hr"]),
             helper.make_node("QuantizeLinear", ["hr", "hs", "hz"], ["hq"]),
             helper.make_node("DequantizeLinear", ["hq", "hs", "hz"], ["hd"]),
             helper.make_node("DequantizeLinear", ["w2", "ws", "wz"], ["w2d"]),
             helper.make_node("MatMul", ["hd", "w2d"], ["o"]),
             helper.make_node("QuantizeLinear", ["o", "ys", "yz"], ["oq"]),
             helper.make_node("DequantizeLinear", ["oq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "autoencoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, WIDTH])],
                              [numpy_helper.from_array(np.asarray(a), n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def test_quantized_autoencoder_runs_in_its_output_buffer(target, tmp_path):
    model = autoencoder()
    feeds = {"x": np.random.default_rng(1).standard_normal((1, WIDTH)).astype(np.float32)}
    got, report = build_and_run(model, feeds, target, tmp_path)
    want = reference(model, feeds)["y"]
    assert np.array_equal(got["y"], want), f"max abs err {np.max(np.abs(got['y'] - want))}"
    kinds = report["memory_sharing"]  # the quantized input and hidden in the room, the quantized result at the end
    assert report["arena_bytes"] == 0 and kinds["at_output_ends"] == 1 and kinds["in_output_buffers"] >= 2


def test_outputs_overlapping_inputs_keep_intermediates_in_the_arena(tmp_path):
    onnx.save(autoencoder(), str(tmp_path / "model.onnx"))
    compiled = compile_model(tmp_path / "model.onnx", BuildOptions(target="wasm32", compile=False,
                                                                   outputs_overlap_inputs=True))
    assert compiled.plan.arena_bytes > 0 and not any(a.link.kind in ("room", "tail") for a in compiled.plan.aliases)
