"""mlcc.compile / mlcc.load: numpy in, numpy out, on host (cffi) and wasm32 (wasmtime), against onnxruntime;
and `mlcc run --runner`, which loads through the same runners."""

from __future__ import annotations

import gc
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import mlcc
from mlcc.errors import RunError, UsageError
from mlcc.verify import reference_outputs
from tests.integration.test_build_systems import small_model


def two_outputs() -> onnx.ModelProto:
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
             helper.make_node("Mul", ["a", "b"], ["product"], name="mul")]
    info = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3])  # noqa: E731
    model = helper.make_model(helper.make_graph(nodes, "pair", [info("a"), info("b")], [info("sum"), info("product")]),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("target", ["host", "wasm32"])
def test_compile_returns_a_callable_model(target, tmp_path):
    path = small_model(tmp_path / "small.onnx")
    model = mlcc.compile(path, target=target)
    assert [(t["name"], t["dtype"], t["shape"]) for t in model.inputs] == [("image", "float32", [1, 2, 8, 8])]
    assert [(t["name"], t["shape"]) for t in model.outputs] == [("scores", [1, 5])]
    image = np.random.default_rng(2).standard_normal((1, 2, 8, 8)).astype(np.float32)
    expected = reference_outputs(str(path), {"image": image}, ["scores"])[0]["scores"]
    for got in (model(image), model(image=image), model({"image": image}), model.run({"image": image})["scores"]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(RunError, match="shape"):
        model(image[:, :1])


@pytest.mark.parametrize("target", ["host", "wasm32"])
def test_compile_a_model_proto_with_two_outputs_and_load_its_folder(target, tmp_path):
    a, b = np.arange(6, dtype=np.float32).reshape(2, 3), np.full((2, 3), 1.5, np.float32)
    total, product = mlcc.compile(two_outputs(), target=target, out_dir=tmp_path / "pair", name="pair")(a, b=b)
    np.testing.assert_array_equal(total, a + b)
    np.testing.assert_array_equal(product, a * b)
    loaded = mlcc.load(tmp_path / "pair")
    np.testing.assert_array_equal(loaded(b=b, a=a)[1], a * b)


def test_a_temporary_build_goes_with_its_model(tmp_path):
    model = mlcc.compile(two_outputs(), target="host")
    folder = model.out_dir
    assert folder.is_dir()
    del model
    gc.collect()
    assert not folder.exists()


def test_bad_options_and_inputs_are_one_error(tmp_path):
    with pytest.raises(UsageError, match="unknown option.*targte"):
        mlcc.compile(two_outputs(), targte="wasm32")
    model = mlcc.compile(two_outputs(), target="host")
    with pytest.raises(RunError, match="missing input 'b'"):
        model(np.zeros((2, 3), np.float32))
    with pytest.raises(RunError, match="both by position and by name"):
        model(np.zeros((2, 3), np.float32), a=np.zeros((2, 3), np.float32))


def _mlcc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlcc", *args], capture_output=True, text=True, timeout=300)


def test_run_picks_the_runner_asked_for(tmp_path):
    path = small_model(tmp_path / "small.onnx")
    assert _mlcc("build", str(path), "-t", "wasm32", "-o", str(tmp_path / "wasm")).returncode == 0
    image = np.random.default_rng(4).standard_normal((1, 2, 8, 8)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    expected = reference_outputs(str(path), {"image": image}, ["scores"])[0]["scores"]
    for runner in ("wasmtime", "node"):
        proc = _mlcc("run", str(tmp_path / "wasm"), "--runner", runner, "--inputs", str(tmp_path / "in.npz"),
                     "--outputs", str(tmp_path / f"{runner}.npz"))
        assert proc.returncode == 0, proc.stderr
        np.testing.assert_allclose(np.load(tmp_path / f"{runner}.npz")["scores"], expected, rtol=1e-4, atol=1e-4)
    for runner, message in (("qemu-user", "runner 'qemu-user' runs executable artifacts"),
                            ("host", "runner 'host' runs shared library artifacts"),
                            ("gpu", "no runner 'gpu'")):
        proc = _mlcc("run", str(tmp_path / "wasm"), "--runner", runner)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(f"error: {message}"), proc.stderr
