"""Golden tests of Gemm and MatMul (f32-gemm kernels) against onnxruntime, on every target.

Sizes are chosen off the tiles (mr 4/6, nr 8/16/32) and past the k block (256) and m block (96) so
every tail path runs. Tolerance rtol=1e-4, atol=1e-4: sums of up to ~300 products in a different order
(and with fused multiply-adds) than onnxruntime's.
"""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (5, 9, 7), (37, 45, 70), (100, 33, 300)])
@pytest.mark.parametrize("b_const", [True, False], ids=["B-const", "B-input"])
def test_gemm_sizes(m, n, k, b_const, target, tmp_path):
    a, b, c = rand(m, k), rand(k, n, seed=1), rand(n, seed=2)
    if b_const:
        model = node_model("Gemm", {"a": a}, ["y"], initializers={"b": b, "c": c})
        feeds = {"a": a}
    else:
        model = node_model("Gemm", {"a": a, "b": b, "c": c}, ["y"])
        feeds = {"a": a, "b": b, "c": c}
    check_model(model, feeds, target, tmp_path, **TOL)


@pytest.mark.parametrize("k", [2, 301, 514])
@pytest.mark.parametrize("n", [45, 264])
def test_gemm_single_row(k, n, target, tmp_path):
    """A fully-connected layer at batch 1 (a GEMV: the row kernel over all of k): k past each remainder of its
    unroll by 4, n off the panel widths; followed by ReLU, which the lowering may fuse."""
    import onnx
    from onnx import TensorProto, helper

    a, b, c = rand(1, k), rand(n, k, seed=1), rand(n, seed=2)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["a", "b", "c"], ["h"], transB=1), helper.make_node("Relu", ["h"], ["y"])],
        "fc", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
        [onnx.numpy_helper.from_array(b, "b"), onnx.numpy_helper.from_array(c, "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    check_model(model, {"a": a}, target, tmp_path, **TOL)


@pytest.mark.parametrize("trans_a,trans_b", [(0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("b_const", [True, False], ids=["B-const", "B-input"])
def test_gemm_transposes_alpha_beta(trans_a, trans_b, b_const, target, tmp_path):
    m, n, k = 6, 11, 13
    a = rand(*((k, m) if trans_a else (m, k)))
    b = rand(*((n, k) if trans_b else (k, n)), seed=1)
    c = rand(m, n, seed=2)
    attrs = {"transA": trans_a, "transB": trans_b, "alpha": 0.75, "beta": -1.5}
    inits = {"b": b, "c": c} if b_const else {"c": c}
    inputs = {"a": a} if b_const else {"a": a, "b": b}
    attrs["_order"] = ["a", "b", "c"]
    check_model(node_model("Gemm", inputs, ["y"], attrs, initializers=inits), inputs, target, tmp_path, **TOL)


@pytest.mark.parametrize("c_shape", [(), (1,), (9,), (1, 9), (5, 1), (5, 9)], ids=str)
def test_gemm_bias_broadcast(c_shape, target, tmp_path):
    a, b, c = rand(5, 7), rand(7, 9, seed=1), rand(*c_shape, seed=2) if c_shape else np.float32(0.5).reshape(())
    attrs = {"beta": 0.5, "_order": ["a", "b", "c"]}
    check_model(node_model("Gemm", {"a": a, "c": np.asarray(c)}, ["y"], attrs, initializers={"b": b}),
                {"a": a, "c": np.asarray(c)}, target, tmp_path, **TOL)


@pytest.mark.parametrize("opset", [7, 9, 11, 13])
def test_gemm_opsets(opset, target, tmp_path):
    a, b, c = rand(4, 6), rand(6, 5, seed=1), rand(4, 5, seed=2)
    check_model(node_model("Gemm", {"a": a}, ["y"], {"transB": 0}, opset=opset, initializers={"b": b, "c": c}),
                {"a": a}, target, tmp_path, **TOL)


def test_gemm_without_c(target, tmp_path):
    a, b = rand(3, 50), rand(40, 50, seed=1)
    check_model(node_model("Gemm", {"a": a}, ["y"], {"transB": 1, "alpha": 2.0}, opset=13, initializers={"b": b}),
                {"a": a}, target, tmp_path, **TOL)


@pytest.mark.parametrize("a_shape,b_shape", [
    ((5, 7), (7, 9)), ((7,), (7, 9)), ((5, 7), (7,)), ((7,), (7,)),
    ((2, 3, 5, 7), (7, 33)), ((2, 1, 5, 7), (3, 7, 9)), ((5, 7), (2, 7, 9)), ((3, 37, 19), (3, 19, 41)),
], ids=str)
@pytest.mark.parametrize("b_const", [True, False], ids=["B-const", "B-input"])
def test_matmul(a_shape, b_shape, b_const, target, tmp_path):
    a, b = rand(*a_shape), rand(*b_shape, seed=3)
    if b_const:
        model, feeds = node_model("MatMul", {"a": a}, ["y"], initializers={"b": b}), {"a": a}
    else:
        model, feeds = node_model("MatMul", {"a": a, "b": b}, ["y"]), {"a": a, "b": b}
    check_model(model, feeds, target, tmp_path, **TOL)


def test_flops():
    from mlcc import ops
    from mlcc.ir import Node, Value
    f32 = np.dtype(np.float32)
    a, b = Value("a", f32, (2, 5, 7)), Value("b", f32, (7, 9))
    node = Node("MatMul", "mm", [a, b], [Value("y", f32, (2, 5, 9))], opset=17)
    assert ops.lookup("MatMul").flops(node) == 2 * 2 * 5 * 9 * 7
    gemm = Node("Gemm", "g", [Value("a", f32, (7, 5)), b], [Value("y", f32, (5, 9))],
                {"alpha": 1.0, "beta": 1.0, "transA": 1, "transB": 0}, opset=13)
    assert ops.lookup("Gemm").flops(gemm) == 2 * 5 * 9 * 7


@pytest.mark.parametrize("tile_target", ["x86_64", "wasm32-scalar"])
def test_every_tile(tile_target, tmp_path):
    # the `target` fixture covers the 4x32 tile; these targets select the 6x16 and 4x8 ones
    a, b = rand(15, 300), rand(300, 37, seed=1)
    check_model(node_model("MatMul", {"a": a}, ["y"], initializers={"b": b}), {"a": a}, tile_target, tmp_path, **TOL)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint32])
@pytest.mark.parametrize("a_shape,b_shape", [((5, 7), (7, 3)), ((2, 1, 4, 6), (3, 6, 5)), ((6,), (6, 2))])
def test_matmul_other_types(dtype, a_shape, b_shape, target, tmp_path):
    """double and integer products take plain loops (integers wrap as in onnxruntime)."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(a_shape) * 4).astype(dtype) if dtype == np.float64 else rng.integers(0, 9, a_shape).astype(dtype)
    b = (rng.standard_normal(b_shape) * 4).astype(dtype) if dtype == np.float64 else rng.integers(0, 9, b_shape).astype(dtype)
    model = node_model("MatMul", {"a": a, "b": b}, ["y"])
    check_model(model, {"a": a, "b": b}, target, tmp_path, rtol=1e-12, atol=0)
