"""Golden tests of the elementwise table against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

UNARY = ["Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Floor", "Ceil", "Erf", "Softplus", "HardSwish", "Reciprocal"]


@pytest.mark.parametrize("op", UNARY)
def test_unary(op, target, tmp_path):
    x = rand(2, 3, 5)
    if op == "Reciprocal":
        x = np.where(np.abs(x) < 0.1, 0.5, x).astype(np.float32)
    check_model(node_model(op, {"x": x}, ["y"]), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["Sqrt", "Log"])
def test_unary_positive(op, target, tmp_path):
    x = rand(4, 7, low=0.1, high=5.0)
    check_model(node_model(op, {"x": x}, ["y"]), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op,attrs", [
    ("LeakyRelu", {"alpha": 0.2}), ("Elu", {"alpha": 0.7}), ("Selu", {}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("Gelu", {}), ("Gelu", {"approximate": "tanh"}),
])
def test_unary_with_attributes(op, attrs, target, tmp_path):
    x = rand(3, 8)
    opset = 20 if op == "Gelu" else 17
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=opset), {"x": x}, target, tmp_path)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((1,), (2, 3))])
def test_binary_broadcast(op, shapes, target, tmp_path):
    a, b = rand(*shapes[0], seed=1), rand(*shapes[1], seed=2)
    if op == "Div":
        b = np.where(np.abs(b) < 0.2, 1.0, b).astype(np.float32)
    check_model(node_model(op, {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path)


def test_add_int64(target, tmp_path):
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    b = np.array([1, -2, 3, -4], dtype=np.int64)
    check_model(node_model("Add", {"a": a, "b": b}, ["y"]), {"a": a, "b": b}, target, tmp_path)
