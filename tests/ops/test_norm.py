"""Golden tests of BatchNormalization, InstanceNormalization, LayerNormalization and LRN against onnxruntime."""

import numpy as np
import pytest

from mlcc.errors import UnsupportedError
from tests.golden import build_and_run, check_model, node_model, rand

TOL = dict(rtol=1e-4, atol=1e-5)


def _bn_params(channels: int, seed: int = 1) -> dict:
    return {"scale": rand(channels, seed=seed), "B": rand(channels, seed=seed + 1), "mean": rand(channels, seed=seed + 2),
            "var": rand(channels, seed=seed + 3, low=0.2, high=2.0)}


@pytest.mark.parametrize("opset,shape,attrs", [
    (15, (2, 3, 5, 4), {}),
    (15, (2, 4), {"epsilon": 1e-3}),
    (14, (1, 3, 7), {"training_mode": 0}),
    (9, (1, 8, 6, 6), {}),  # the zoo's ResNet/Inception form
    (7, (1, 8, 3, 3), {"spatial": 1}),
    (15, (1, 2, 3, 4, 5), {}),
])
def test_batch_norm_constant_statistics(opset, shape, attrs, target, tmp_path):
    x = rand(*shape)
    model = node_model("BatchNormalization", {"x": x}, ["y"], attrs, opset=opset, initializers=_bn_params(shape[1]))
    check_model(model, {"x": x}, target, tmp_path, **TOL)


def test_batch_norm_per_activation(target, tmp_path):
    # opset 7 spatial=0: statistics of shape C x H x W, one scale and shift per activation
    x = rand(2, 3, 2, 4)
    params = {name: a.reshape(3, 2, 4) for name, a in _bn_params(24, seed=11).items()}
    model = node_model("BatchNormalization", {"x": x}, ["y"], {"spatial": 0}, opset=7, initializers=params)
    check_model(model, {"x": x}, target, tmp_path, **TOL)


def test_batch_norm_runtime_statistics(target, tmp_path):
    x = rand(2, 3, 4, 4)
    feeds = {"x": x, **_bn_params(3, seed=5)}
    check_model(node_model("BatchNormalization", feeds, ["y"], opset=15), feeds, target, tmp_path, **TOL)


def test_batch_norm_mixed_statistics(target, tmp_path):
    x, params = rand(1, 4, 3, 3), _bn_params(4, seed=9)
    feeds = {"x": x, "mean": params.pop("mean")}
    model = node_model("BatchNormalization", feeds, ["y"], opset=9, initializers=params,
                       attrs={"_order": ["x", "scale", "B", "mean", "var"]})
    check_model(model, feeds, target, tmp_path, **TOL)


@pytest.mark.parametrize("shape,attrs", [
    ((2, 3, 4, 5), {}),
    ((4, 2), {"epsilon": 1e-2, "momentum": 0.7}),
    ((1, 3, 2, 2, 3), {"momentum": 0.0}),
])
def test_batch_norm_training_mode(shape, attrs, target, tmp_path):
    # the batch's own statistics normalise y; running_mean / running_var blend them into the given ones
    x = rand(*shape, seed=3) * 2 + 0.5
    model = node_model("BatchNormalization", {"x": x}, ["y", "running_mean", "running_var"],
                       {"training_mode": 1, **attrs}, opset=15, initializers=_bn_params(shape[1]))
    check_model(model, {"x": x}, target, tmp_path, **TOL)


def test_batch_norm_training_mode_runtime_statistics_y_only(target, tmp_path):
    x = rand(3, 4, 5)
    feeds = {"x": x, **_bn_params(4, seed=7)}
    model = node_model("BatchNormalization", feeds, ["y", "running_mean", "running_var"], {"training_mode": 1}, opset=14)
    del model.graph.output[1:]  # the running statistics are computed by nothing
    check_model(model, feeds, target, tmp_path, **TOL)


def test_batch_norm_saved_statistics_unsupported(tmp_path):
    x = rand(2, 3, 4)
    outputs = {name: (np.float32, x.shape if name == "y" else (3,)) for name in ("y", "m", "v", "saved_m", "saved_v")}
    model = node_model("BatchNormalization", {"x": x}, outputs, opset=9, initializers=_bn_params(3))
    with pytest.raises(UnsupportedError, match="training statistics"):
        build_and_run(model, {"x": x}, "host", tmp_path)


@pytest.mark.parametrize("shape,epsilon", [((2, 3, 5, 4), 1e-5), ((1, 4, 9), 1e-3), ((1, 2, 3, 4, 2), 1e-5)])
def test_instance_norm(shape, epsilon, target, tmp_path):
    x = rand(*shape) * 3 + 1
    model = node_model("InstanceNormalization", {"x": x}, ["y"], {"epsilon": epsilon}, opset=9,
                       initializers={"scale": rand(shape[1], seed=2), "B": rand(shape[1], seed=3)})
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("shape,axis,with_bias", [
    ((2, 5, 16), -1, True),
    ((2, 5, 16), -1, False),
    ((2, 3, 4, 6), 2, True),
    ((3, 8), 0, True),
    ((4, 33), 1, False),
])
def test_layer_norm(shape, axis, with_bias, target, tmp_path):
    x = rand(*shape) * 2 + 0.5
    norm_shape = shape[axis:]
    inits = {"scale": rand(*norm_shape, seed=4)}
    if with_bias:
        inits["B"] = rand(*norm_shape, seed=5)
    model = node_model("LayerNormalization", {"x": x}, ["y"], {"axis": axis, "epsilon": 1e-5}, initializers=inits)
    check_model(model, {"x": x}, target, tmp_path, **TOL)


def test_layer_norm_runtime_scale(target, tmp_path):
    feeds = {"x": rand(2, 3, 10), "scale": rand(10, seed=6), "B": rand(10, seed=7)}
    check_model(node_model("LayerNormalization", feeds, ["y"]), feeds, target, tmp_path, **TOL)


def test_layer_norm_unread_statistics_ok(target, tmp_path):
    x = rand(2, 6)
    model = node_model("LayerNormalization", {"x": x}, ["y", "mean", "inv_std"], initializers={"scale": rand(6, seed=8)})
    del model.graph.output[1:]
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm_statistics_through_its_function_body(axis, target, tmp_path):
    """Naming Mean and InvStdDev (training graphs) expands the op into its ONNX function body."""
    x = rand(2, 3, 6)
    scale = rand(*x.shape[axis:], seed=8)
    model = node_model("LayerNormalization", {"x": x}, ["y", "mean", "inv_std"], {"axis": axis}, initializers={"scale": scale})
    check_model(model, {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape,attrs", [
    ((1, 8, 5, 5), {"size": 5}),  # AlexNet / GoogLeNet: size 5, alpha 1e-4, beta 0.75
    ((2, 6, 3, 4), {"size": 3, "alpha": 0.02, "beta": 0.5, "bias": 2.0}),
    ((1, 3, 2, 2), {"size": 7, "alpha": 0.3, "beta": 1.0}),  # window wider than the channels
    ((1, 21, 5, 7), {"size": 5, "alpha": 0.5, "bias": 2.0}),  # vectors of 35 pixels and a tail
])
def test_lrn(shape, attrs, target, tmp_path):
    x = rand(*shape) * 2
    check_model(node_model("LRN", {"x": x}, ["y"], attrs, opset=9), {"x": x}, target, tmp_path, **TOL)


def _lrn_spec(x: np.ndarray, size: int, alpha: float, beta: float = 0.75, bias: float = 1.0) -> np.ndarray:
    """LRN as the ONNX spec words it: channels c - floor((size-1)/2) .. c + ceil((size-1)/2)."""
    square_sum = np.zeros_like(x, dtype=np.float64)
    channels = x.shape[1]
    for c in range(channels):
        first, last = max(0, c - (size - 1) // 2), min(channels - 1, c + -(-(size - 1) // 2))
        square_sum[:, c] = np.sum(x[:, first:last + 1].astype(np.float64) ** 2, axis=1)
    return (x / (bias + alpha / size * square_sum) ** beta).astype(np.float32)


def test_lrn_even_size(target, tmp_path):
    # onnxruntime refuses even sizes (and onnx's reference loops over the batch, not the channels): the
    # spec's window reaches one channel further after c than before it
    x = rand(1, 5, 3, 2) * 2
    model = node_model("LRN", {"x": x}, ["y"], {"size": 4, "alpha": 0.1})
    check_model(model, {"x": x}, target, tmp_path, expected={"y": _lrn_spec(x, 4, 0.1)}, **TOL)
