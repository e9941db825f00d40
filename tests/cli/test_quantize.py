"""`mlcc quantize`: static QDQ quantization through onnxruntime.quantization, the printed error of the int8
model against fp32 on the calibration data, and one `error:` line for bad input."""

import re

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import numpy_helper

from mlcc.cli import main
from tests.golden import build_and_run
from tests.quantized.models import convnet
from tests.quantized.test_quantized_models import compare, reference


@pytest.fixture(scope="module")
def fp32(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quantize")
    model, shape = convnet(17)
    onnx.save(model, str(folder / "convnet.onnx"))
    batches = np.random.default_rng(3).standard_normal((8, *shape[1:])).astype(np.float32)  # 8 batches of [1, 3, 16, 16]
    np.savez(folder / "calibration.npz", x=batches)
    return folder


def quantize(*args):
    return CliRunner().invoke(main, ["quantize", *map(str, args)])


def test_quantizes_per_channel_and_reports_the_error_against_fp32(fp32, tmp_path):
    out = tmp_path / "convnet.int8.onnx"
    result = quantize(fp32 / "convnet.onnx", "--calibration", fp32 / "calibration.npz", "-o", out)
    assert result.exit_code == 0, result.output
    int8 = onnx.load(str(out))
    inits = {i.name: numpy_helper.to_array(i) for i in int8.graph.initializer}
    made = {o: n for n in int8.graph.node for o in n.output}
    convs = [n for n in int8.graph.node if n.op_type == "Conv"]
    assert len(convs) == 4
    for conv in convs:  # int8 weights, one scale per output channel, zero points 0
        dq = made[conv.input[1]]
        w, scale = inits[dq.input[0]], inits[dq.input[1]]
        assert dq.op_type == "DequantizeLinear" and w.dtype == np.int8 and scale.shape == (w.shape[0],)
        assert not inits[dq.input[2]].any()
    x_dq = made[convs[0].input[0]]  # activations: uint8 with a zero point
    assert x_dq.op_type == "DequantizeLinear" and inits[x_dq.input[2]].dtype == np.uint8

    # the printed figures, against both models run here batch by batch (onnxruntime, optimisation off)
    data = np.load(fp32 / "calibration.npz")["x"]
    want = np.stack([reference(onnx.load(str(fp32 / "convnet.onnx")), {"x": b[None]})["y"] for b in data])
    got = np.stack([reference(int8, {"x": b[None]})["y"] for b in data])
    diff = np.abs(want.astype(np.float64) - got)
    line = next(x for x in result.output.splitlines() if "output 'y'" in x)
    max_abs, mean_abs = map(float, re.search(r"max abs err (\S+), mean abs err (\S+?),", line).groups())
    assert max_abs == pytest.approx(diff.max(), rel=1e-3) and mean_abs == pytest.approx(diff.mean(), rel=1e-3)
    agree = int((want.argmax(-1) == got.argmax(-1)).sum())
    assert f"top-1 agreement {agree}/8 " in line
    assert "calibrated on 8 batch(es)" in result.output
    fp32_bytes = sum(a.nbytes for a in (numpy_helper.to_array(i) for i in onnx.load(str(fp32 / "convnet.onnx")).graph.initializer))
    assert f"weights: {fp32_bytes} B fp32 -> {sum(a.nbytes for a in inits.values())} B int8" in result.output

    # and mlcc compiles what it wrote into integer kernels matching the exact integer semantics
    feeds = {"x": data[:1]}
    outputs, report = build_and_run(int8, feeds, "host", tmp_path)
    compare(int8, outputs, reference(int8, feeds))
    assert report["passes"][0]["by_op"] == {  # Concat's inputs have scales of their own
        "QuantizedConv": 4, "QuantizedMatMul": 1, "QuantizedAdd": 1, "MaxPool": 1, "Concat": 1, "Requantize": 2,
        "QuantizedAveragePool": 2, "Flatten": 1}


@pytest.mark.parametrize("case,expect", [
    ("no_model", "no such model file"),
    ("no_data", "--calibration"),
    ("not_npz", "cannot read as .npz"),
    ("wrong_key", "no array for input(s) 'x'; unknown key(s) 'image'"),
    ("wrong_shape", "input 'x': shape [8, 3, 8, 8] does not fit the input's [N, 3, 16, 16]"),
    ("wrong_dtype", "input 'x': dtype int64, the input is float32"),
])
def test_bad_input_is_one_error_line(fp32, tmp_path, case, expect):
    model, data = fp32 / "convnet.onnx", fp32 / "calibration.npz"
    if case == "no_model":
        model = tmp_path / "missing.onnx"
    elif case == "no_data":
        data = tmp_path / "missing.npz"
    elif case == "not_npz":
        data = tmp_path / "data.npz"
        data.write_bytes(b"not a zip file")
    else:
        data = tmp_path / "data.npz"
        arrays = {"wrong_key": {"image": np.zeros((8, 3, 16, 16), np.float32)},
                  "wrong_shape": {"x": np.zeros((8, 3, 8, 8), np.float32)},
                  "wrong_dtype": {"x": np.zeros((8, 3, 16, 16), np.int64)}}[case]
        np.savez(data, **arrays)
    out = tmp_path / "out.onnx"
    result = CliRunner().invoke(main, ["quantize", str(model), "--calibration", str(data), "-o", str(out)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], result.output
    assert not out.exists()


def test_sample_calibration_data_is_what_make_samples_writes():
    """samples/digits_calibration.npz (the README's int8 example) is reproducible from its generator."""
    import importlib.util
    from pathlib import Path

    samples = Path(__file__).resolve().parents[2] / "samples"
    spec = importlib.util.spec_from_file_location("make_samples", samples / "make_samples.py")
    make_samples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_samples)
    with np.load(samples / "digits_calibration.npz") as committed:
        np.testing.assert_array_equal(committed["image"], make_samples.digits_calibration()["image"])
