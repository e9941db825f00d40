"""passes/fuse_integer_matmul: MatMulInteger by constant weights [-> Cast -> Mul -> Add] becomes one
PackedIntegerMatMul; what it must leave alone stays (numerics: tests/quantized/test_dynamic_products.py)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.passes.util import imported, make, run_pass, text


def chain(weights=np.int8, w_zero=0, addend_const=True, cast_to=TensorProto.FLOAT, second_mul=False):
    """DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale * w_scale) -> Add [-> Mul]."""
    rng = np.random.default_rng(0)
    info = np.iinfo(weights)
    inits = [numpy_helper.from_array(rng.integers(info.min, info.max, (6, 5), endpoint=True).astype(weights), "w"),
             numpy_helper.from_array(np.array(w_zero, weights), "wz"),
             numpy_helper.from_array(np.float32(0.02), "ws"),
             numpy_helper.from_array(np.arange(5, dtype=np.float32), "bias"),
             numpy_helper.from_array(np.float32(3.0), "three")]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("Mul", ["xs", "ws"], ["s"]),
             helper.make_node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
             helper.make_node("Cast", ["acc"], ["f"], to=cast_to),
             helper.make_node("Mul", ["f", "s"], ["scaled"]),
             helper.make_node("Add", ["scaled", "bias" if addend_const else "x2"], ["y"])]
    out = "y"
    if cast_to != TensorProto.FLOAT:  # the chain ends at the Cast
        del nodes[4:]
        out = "f"
    if second_mul:
        nodes.append(helper.make_node("Mul", ["y", "three"], ["z"]))
        out = "z"
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6])]
    if not addend_const:
        inputs.append(helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2, 3, 5]))
    out_type = TensorProto.FLOAT if cast_to == TensorProto.FLOAT else cast_to
    return make(nodes, inputs, [helper.make_tensor_value_info(out, out_type, [2, 3, 5])], inits)


def test_the_whole_chain_becomes_one_node():
    graph = imported(chain(second_mul=True))
    assert run_pass(graph, "fuse_integer_matmul") == {"fused": 1, "scaled": 1, "biased": 1}
    ir = text(graph)
    assert "%y:float32[2,3,5] = PackedIntegerMatMul(%xq, %" in ir and "%s, %bias_columns) a_flip=128" in ir, ir
    assert "= MatMulInteger(" not in ir and "Cast(" not in ir and "Mul(%y, %three)" in ir, ir  # the second Mul stays


def test_a_run_time_addend_stays_an_add():
    graph = imported(chain(addend_const=False))
    assert run_pass(graph, "fuse_integer_matmul") == {"fused": 1, "scaled": 1, "biased": 0}
    assert "Add(%scaled, %x2)" in text(graph)


@pytest.mark.parametrize("kwargs", [dict(weights=np.uint8, w_zero=100), dict(cast_to=TensorProto.DOUBLE)])
def test_what_does_not_fit(kwargs):
    """uint8 weights whose values less the zero point leave int8 keep the scalar MatMulInteger; a Cast to
    another type than float32 leaves an int32 PackedIntegerMatMul and the rest as it was."""
    graph = imported(chain(**kwargs))
    did = run_pass(graph, "fuse_integer_matmul")
    ir = text(graph)
    if "weights" in kwargs:
        assert did["fused"] == 0 and "= MatMulInteger(" in ir
    else:
        assert did == {"fused": 1, "scaled": 0, "biased": 0}
        assert "%acc:int32[2,3,5] = PackedIntegerMatMul" in ir and "Cast(%acc)" in ir, ir
