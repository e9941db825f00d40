"""Golden tests of Softmax and LogSoftmax against onnxruntime: opset < 13 (coerced to 2-D at axis) and
opset >= 13 (along one axis), contiguous and strided axes."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset,shape,attrs", [
    (13, (4, 10), {}),
    (13, (2, 3, 17), {}),
    (13, (2, 3, 17), {"axis": 1}),  # strided: normalised across 3 with 17 inner positions
    (13, (2, 3, 4, 5), {"axis": 0}),
    (13, (2, 3, 4, 5), {"axis": -2}),
    (13, (7,), {}),
    (11, (2, 3, 4), {}),  # default axis 1: over the flattened 3*4
    (11, (2, 3, 4), {"axis": 2}),
    (11, (2, 3, 4), {"axis": 0}),
    (9, (1, 1000), {}),  # classifier heads of the opset-9 zoo models
    (9, (1, 1000, 1, 1), {}),  # SqueezeNet's head: coerced to [1, 1000]
    (9, (2, 5, 6), {"axis": -1}),
])
def test_softmax(op, opset, shape, attrs, target, tmp_path):
    x = rand(*shape) * 4
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=opset), {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("axis", [-1, 1])
def test_softmax_large_logits_stable(op, axis, target, tmp_path):
    # exp(x) overflows float32 here unless the max is subtracted first
    x = (rand(3, 8, 6, seed=2) * 30 + np.float32(200)).astype(np.float32)
    check_model(node_model(op, {"x": x}, ["y"], {"axis": axis}), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("shape,axis", [((4, 10), -1), ((2, 3, 5), 1)])
def test_softmax_double(op, shape, axis, target, tmp_path):
    x = rand(*shape, dtype=np.float64) * 4
    check_model(node_model(op, {"x": x}, ["y"], {"axis": axis}), {"x": x}, target, tmp_path, rtol=1e-12, atol=1e-12)
