"""Golden tests of the signal ops against onnxruntime: DFT (opset 17 and 20 forms, real and complex input,
onesided, inverse, dft_length padding and truncation, radix-2 and direct lengths, float64), STFT (window,
frame_length, onesided), the cosine windows and MelWeightMatrix."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,attrs,length", [
    ((2, 16, 1), {}, None),  # radix-2
    ((2, 12, 2), {}, None),  # direct, complex input
    ((3, 8, 5, 2), {"axis": 2}, None),
    ((2, 16, 1), {"onesided": 1}, None),
    ((2, 9, 1), {"onesided": 1}, None),
    ((2, 8, 2), {"inverse": 1}, None),
    ((2, 10, 2), {"inverse": 1}, None),
    ((2, 10, 1), {}, 16),  # zero-padded to a power of two
    ((2, 10, 2), {}, 6),  # truncated
])
def test_dft_opset17(shape, attrs, length, target, tmp_path):
    x = rand(*shape)
    inits = {} if length is None else {"n": np.asarray(length, np.int64)}
    order = ["x"] if length is None else ["x", "n"]
    model = node_model("DFT", {"x": x}, ["y"], {**attrs, "_order": order}, opset=17, initializers=inits)
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("shape,axis,attrs", [
    ((2, 16, 3, 1), 1, {}),
    ((2, 16, 3, 2), -3, {"inverse": 1}),
    ((4, 6, 1), -2, {"onesided": 1}),
])
def test_dft_opset20(shape, axis, attrs, target, tmp_path):
    x = rand(*shape)
    model = node_model("DFT", {"x": x}, ["y"], {**attrs, "_order": ["x", "", "axis"]}, opset=20,
                       initializers={"axis": np.asarray(axis, np.int64)})
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("bins,length", [(9, 16), (6, 10), (5, None)])
def test_dft_inverse_onesided(bins, length, target, tmp_path):
    # the real signal from the first half of its spectrum (numpy's irfft; onnxruntime lacks this form)
    x = rand(3, bins, 2)
    inits = {} if length is None else {"n": np.asarray(length, np.int64)}
    model = node_model("DFT", {"x": x}, ["y"], {"inverse": 1, "onesided": 1, "_order": ["x", "n"] if inits else ["x"]},
                       opset=17, initializers=inits)
    spectrum = x[..., 0] + 1j * x[..., 1]
    expected = np.fft.irfft(spectrum, n=length or 2 * (bins - 1), axis=1)[..., None].astype(np.float32)
    check_model(model, {"x": x}, target, tmp_path, expected={"y": expected}, **TOL)


def test_dft_float64(target, tmp_path):
    x = rand(2, 12, 2, dtype=np.float64)
    check_model(node_model("DFT", {"x": x}, ["y"], {}, opset=17), {"x": x}, target, tmp_path, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("length,step,frame,window,onesided", [
    (64, 8, 16, False, 1),
    (64, 8, None, True, 1),
    (50, 7, 12, True, 0),  # a direct DFT, frames that stop short of the end
])
def test_stft(length, step, frame, window, onesided, target, tmp_path):
    x = rand(2, length, 1)
    inits = {"step": np.asarray(step, np.int64)}
    order = ["x", "step"]
    if window:
        inits["w"] = np.hanning(frame or 16).astype(np.float32)
        order.append("w")
    if frame is not None:
        inits["len"] = np.asarray(frame, np.int64)
        order += [""] * (3 - len(order)) + ["len"]
    model = node_model("STFT", {"x": x}, ["y"], {"onesided": onesided, "_order": order}, opset=17, initializers=inits)
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window(op, periodic, target, tmp_path):
    # a constant size: the frontend folds the window
    model = node_model(op, {}, ["y"], {"periodic": periodic}, opset=17, initializers={"size": np.asarray(11, np.int32)})
    check_model(model, {}, target, tmp_path, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mel_bins,length,rate,low,high", [(8, 16, 8192, 0.0, 4096.0), (10, 64, 16000, 20.0, 7600.0)])
def test_mel_weight_matrix(mel_bins, length, rate, low, high, target, tmp_path):
    # sizes constant, the rest fed at run time: computed by the compiled model
    feeds = {"rate": np.asarray(rate, np.int32), "low": np.asarray(low, np.float32), "high": np.asarray(high, np.float32)}
    model = node_model("MelWeightMatrix", feeds, ["y"], {"_order": ["bins", "len", "rate", "low", "high"]}, opset=17,
                       initializers={"bins": np.asarray(mel_bins, np.int32), "len": np.asarray(length, np.int32)})
    check_model(model, feeds, target, tmp_path, rtol=1e-6, atol=1e-6)
