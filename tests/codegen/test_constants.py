"""Constants lowering makes (packed weights) are stored once however many steps read them."""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper, numpy_helper

from mlcc.pipeline import BuildOptions, build
from tests.golden import check_model, rand


def convs(count: int) -> onnx.ModelProto:
    """`count` 3x3 convolutions in a chain, every one reading the same weight and bias tensors."""
    nodes, x = [], "x"
    for i in range(count):
        nodes += [helper.make_node("Conv", [x, "w", "b"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        x = f"r{i}"
    graph = helper.make_graph(nodes, "shared", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, 6, 6])],
                              [numpy_helper.from_array(rand(8, 8, 3, 3, seed=1), "w"),
                               numpy_helper.from_array(rand(8, seed=2), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def weights(model: onnx.ModelProto, tmp_path, target: str) -> tuple[int, int]:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / f"{model.graph.name}.onnx"
    onnx.save(model, str(path))
    _, report = build(path, BuildOptions(target=target, out_dir=tmp_path / target, compile=False))
    return report["weights_bytes"], report["weights_tensors"]


def test_a_weight_packed_alike_for_two_readers_is_stored_once(tmp_path):
    for target in ("x86_64", "wasm32"):
        assert weights(convs(2), tmp_path / "two", target) == weights(convs(1), tmp_path / "one", target)


def test_the_shared_packed_weight_computes_both_convolutions(tmp_path):
    x = rand(1, 8, 6, 6, seed=3)
    check_model(convs(2), {"x": x}, "host", tmp_path, rtol=1e-4, atol=1e-4)
