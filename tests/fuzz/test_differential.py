"""A bounded CI budget of the differential fuzzer: random valid graphs, mlcc vs onnxruntime (rtol 1e-3, atol 1e-4),
and random quantized graphs against the exact integer semantics (within one quantization step; a rounding tie
carried forward by later layers is told apart from a fault by rebuilding with every 8-bit tensor an output).

Each seed is its own test so a failure names the seed; reproduce it with
`python -m tests.fuzz.differential --seeds N:N+1 -t TARGET [--quantized] --keep DIR`. Wider runs belong to that
command.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.fuzz.differential import ATOL, RTOL, run_seed
from tests.fuzz.quantized_graphs import first_divergences

# Slices apart from the CLI's default 0:100, so CI and manual sweeps cover different graphs.
HOST_SEEDS = range(10_000, 10_100)
WASM_SEEDS = range(20_000, 20_030)
QUANTIZED_HOST_SEEDS = range(30_000, 30_030)
QUANTIZED_WASM_SEEDS = range(40_000, 40_008)


def _check(seed: int, target: str, quantized: bool = False) -> None:
    outcome = run_seed(seed, target, quantized=quantized)
    passing = ("ok", "tie-amplified") if quantized else ("ok",)
    assert outcome.status in passing, (f"seed {seed} on {target}: {outcome.status} [{outcome.ops}] {outcome.detail} "
                                       + ("(one quantization step)" if quantized else f"(rtol {RTOL:g}, atol {ATOL:g})"))


@pytest.mark.parametrize("seed", HOST_SEEDS)
def test_random_graph_host(seed):
    _check(seed, "host")


@pytest.mark.parametrize("seed", WASM_SEEDS)
def test_random_graph_wasm32(seed):
    _check(seed, "wasm32")


@pytest.mark.parametrize("seed", QUANTIZED_HOST_SEEDS)
def test_random_quantized_graph_host(seed):
    _check(seed, "host", quantized=True)


@pytest.mark.parametrize("seed", QUANTIZED_WASM_SEEDS)
def test_random_quantized_graph_wasm32(seed):
    _check(seed, "wasm32", quantized=True)


def _chain() -> onnx.ModelProto:
    """x -> Q -> a (uint8) -> DQ -> Relu -> Q -> b (uint8) -> DQ -> y: two integer tensors in a chain."""
    scale, zero = helper.make_tensor("s", TensorProto.FLOAT, [], [0.1]), helper.make_tensor("z", TensorProto.UINT8, [], [128])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["a"]),
             helper.make_node("DequantizeLinear", ["a", "s", "z"], ["af"]),
             helper.make_node("Relu", ["af"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["b"]),
             helper.make_node("DequantizeLinear", ["b", "s", "z"], ["y"])]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(n, t, [4]) for n, t in
                               (("y", TensorProto.FLOAT), ("a", TensorProto.UINT8), ("b", TensorProto.UINT8))],
                              [scale, zero])
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_first_divergences_tells_a_fault_from_a_carried_tie():
    model = _chain()
    expected = {"a": np.array([128, 130, 140, 150], np.uint8), "b": np.array([128, 130, 140, 150], np.uint8),
                "y": np.array([0.0, 0.2, 1.2, 2.2], np.float32)}
    carried = {"a": np.array([128, 131, 140, 150], np.uint8), "b": np.array([128, 133, 140, 150], np.uint8),
               "y": np.array([0.0, 0.5, 1.2, 2.2], np.float32)}
    assert first_divergences(model, carried, expected) == []  # a one-step difference in a, carried into b
    fault = {"a": expected["a"], "b": np.array([128, 133, 140, 150], np.uint8), "y": carried["y"]}
    found = first_divergences(model, fault, expected)
    assert [f.split(":")[0] for f in found] == ["b"]  # b three steps off from a bit-identical a; y follows b
