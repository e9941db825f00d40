"""The commands as a user types them: outputs, files written, and one-line errors with exit 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "digits_cnn.onnx"


def mlcc(*args, cwd=None, timeout=300):
    proc = subprocess.run([sys.executable, "-m", "mlcc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return proc


def assert_one_line_error(proc, *needles):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def tiny_model(path: Path, dims=(1, 4), ops=("Relu",), opset=17):
    nodes, prev = [], "x"
    for i, op in enumerate(ops):
        nodes.append(helper.make_node(op, [prev], [f"y{i}"], name=f"node{i}"))
        prev = f"y{i}"
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, list(dims))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_build_defaults_and_report(tmp_path):
    model = tiny_model(tmp_path / "my-model.onnx", ops=("Relu", "Sigmoid"))
    proc = mlcc("build", model, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "mlcc-out" / f"my-model-{json.loads((tmp_path / 'mlcc-out').iterdir().__next__().joinpath('report.json').read_text())['target']}"
    report = json.loads((out / "report.json").read_text())
    assert report["name"] == "my_model"
    assert (out / "my_model.h").is_file() and (out / "my_model.c").is_file()
    assert (out / report["artifacts"]["shared_library"]).is_file()
    assert (out / report["artifacts"]["static_library"]).is_file()
    for key in ("inputs", "outputs", "arena_bytes", "weights_bytes", "artifacts", "ops", "passes"):
        assert key in report
    assert report["inputs"] == [{"name": "x", "dtype": "float32", "shape": [1, 4]}]
    from mlcc.passes import PIPELINES

    assert [p["pass"] for p in report["passes"]] == PIPELINES[2]  # -O2 unless told otherwise
    assert report["ops_before"] == {"Relu": 1, "Sigmoid": 1} and report["ops"] == {"FusedElementwise": 1}
    assert mlcc("build", model, "-O0", "-o", tmp_path / "o0", cwd=tmp_path).returncode == 0
    assert json.loads((tmp_path / "o0" / "report.json").read_text())["ops"] == {"Relu": 1, "Sigmoid": 1}


def test_build_wasm_and_run_with_npz(tmp_path):
    model = tiny_model(tmp_path / "m.onnx", dims=(2, 3), ops=("Neg",))
    assert mlcc("build", model, "-t", "wasm32", "-o", tmp_path / "w", "--name", "neg").returncode == 0
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.savez(tmp_path / "in.npz", x=x)
    proc = mlcc("run", tmp_path / "w", "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "out.npz")
    assert proc.returncode == 0, proc.stderr
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["y0"], -x)


def test_verify_passes_and_fails_by_tolerance(tmp_path):
    model = tiny_model(tmp_path / "m.onnx", dims=(64,), ops=("Sigmoid", "Tanh", "Exp"))
    ok = mlcc("verify", model)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "max abs err" in ok.stdout
    strict = mlcc("verify", model, "--rtol", "0", "--atol", "0")
    assert strict.returncode in (0, 1)  # transcendental results may differ in the last bit: then exit 1
    if strict.returncode == 1:
        assert "FAIL" in strict.stdout


def test_inspect_text_and_json(tmp_path):
    proc = mlcc("inspect", SAMPLE)
    assert proc.returncode == 0, proc.stderr
    assert "arena" in proc.stdout and "Conv" in proc.stdout
    info = json.loads(mlcc("inspect", SAMPLE, "--json").stdout)
    assert info["parameters"] == sum(int(np.prod(i.dims)) for i in onnx.load(str(SAMPLE)).graph.initializer)
    assert info["flops"] > 0 and info["memory"]["arena_bytes"] > 0


def test_targets_lists_host():
    proc = mlcc("targets")
    assert proc.returncode == 0 and "wasm32" in proc.stdout and "(host)" in proc.stdout
    policies = {line.split()[0]: line.split()[5] for line in proc.stdout.splitlines()[1:] if "(host)" not in line}
    assert policies["cortex-m4"] == "size/model" and policies["wasm32"] == "speed/model"


# --- user errors: one line, exit 2, nothing left behind -----------------------------------------

def test_missing_file(tmp_path):
    assert_one_line_error(mlcc("build", tmp_path / "nope.onnx", "-o", tmp_path / "o"), "nope.onnx")
    assert not (tmp_path / "o").exists()


def test_o3_is_not_a_level(tmp_path):
    # -O3 was -O2 under another name; it is refused, naming the levels, before any work is done
    model = tiny_model(tmp_path / "m.onnx")
    for command in ("build", "verify", "inspect"):
        assert_one_line_error(mlcc(command, model, "-O3", "-o", tmp_path / "o") if command == "build"
                              else mlcc(command, model, "-O3"), "-O3", "-O0, -O1, -O2")
    assert not (tmp_path / "o").exists()


def test_garbage_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(os.urandom(3000))
    assert_one_line_error(mlcc("build", bad, "-o", tmp_path / "o"), "bad.onnx")
    assert not (tmp_path / "o").exists()


def test_every_unsupported_op_is_named_at_once(tmp_path):
    path = tmp_path / "u.onnx"
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="ok"),
             helper.make_node("FancyOp", ["a"], ["b"], name="first_bad", domain="com.example"),
             helper.make_node("OtherOp", ["b"], ["y"], name="second_bad", domain="com.example")]
    graph = helper.make_graph(nodes, "u", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    onnx.save(model, str(path))
    assert_one_line_error(mlcc("build", path, "-o", tmp_path / "o"), "FancyOp", "first_bad", "OtherOp", "second_bad")
    assert not (tmp_path / "o").exists() and not list(tmp_path.glob(".o.*"))


def test_dynamic_dim_needs_a_flag_and_the_flag_works(tmp_path):
    path = tiny_model(tmp_path / "d.onnx", dims=("batch", 4))
    assert_one_line_error(mlcc("build", path, "-o", tmp_path / "o"), "batch", "--dim")
    assert mlcc("build", path, "--dim", "batch=3", "-o", tmp_path / "o").returncode == 0
    assert json.loads((tmp_path / "o" / "report.json").read_text())["inputs"][0]["shape"] == [3, 4]
    assert mlcc("build", path, "--shape", "x=5,4", "-o", tmp_path / "o2").returncode == 0


@pytest.mark.parametrize("args,needles", [
    (["--shape", "nope=1,4"], ["nope", "x"]),
    (["--shape", "x=1,a"], ["--shape"]),
    (["--shape", "x=1,4,5"], ["rank"]),
    (["--dim", "batch=zero"], ["--dim"]),
    (["--dim", "nosuch=2"], ["nosuch"]),
    (["-t", "pdp11"], ["pdp11", "wasm32"]),
    (["--name", "1bad"], ["--name"]),
    (["--frobnicate"], ["--frobnicate"]),
    (["--disable-pass", "nosuchpass"], ["nosuchpass", "fold_constants"]),
])
def test_bad_command_line(tmp_path, args, needles):
    path = tiny_model(tmp_path / "m.onnx", dims=("batch", 4))
    assert_one_line_error(mlcc("build", path, "-o", tmp_path / "o", *args), *needles)
    assert not (tmp_path / "o").exists()


def test_external_data_outside_the_model_folder_is_refused(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.ones(4, np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    w = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    w.data_location = TensorProto.EXTERNAL
    w.ClearField("raw_data")
    for key, value in (("location", "../secret.bin"), ("offset", "0"), ("length", "16")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "e",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    (folder / "m.onnx").write_bytes(model.SerializeToString())
    assert_one_line_error(mlcc("build", folder / "m.onnx", "-o", tmp_path / "o"), "outside the model's folder")


def test_run_on_a_folder_that_is_not_a_build(tmp_path):
    assert_one_line_error(mlcc("run", tmp_path), "report.json")
