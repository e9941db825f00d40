"""Tuning files (mlcc/tuning.py) and `mlcc tune` (mlcc/tune.py): a file's choices change what a layer runs and
results still match onnxruntime; files round-trip; bad ones are one error line; other machines' entries are
ignored with a note; `mlcc tune` on a tiny model writes a file a build takes. No timed assertions."""

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import tuning
from mlcc.ops import _gemm
from mlcc.pipeline import BuildOptions, compile_model
from mlcc.targets import resolve
from tests.cli.test_cli import assert_one_line_error, mlcc
from tests.golden import check_model, rand


def three_convs() -> onnx.ModelProto:
    """3x3 8->16, 1x1 16->24, 3x3 24->16 on 12x12: too many channels for the direct kernel by default."""
    rng = np.random.default_rng(3)

    def w(*shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), f"w{shape}")

    inits = [w(16, 8, 3, 3), w(24, 16, 1, 1), w(16, 24, 3, 3)]
    nodes = [helper.make_node("Conv", ["x", inits[0].name], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["ar"], name="relu_a"),
             helper.make_node("Conv", ["ar", inits[1].name], ["b"], name="conv_b"),
             helper.make_node("Conv", ["b", inits[2].name], ["y"], name="conv_c", pads=[1, 1, 1, 1])]
    graph = helper.make_graph(nodes, "three_convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 12, 12])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _steps(path: Path, target: str, tuning_file: Path | None = None) -> dict:
    compiled = compile_model(path, BuildOptions(target=target, compile=False, tuning=tuning_file))
    return {s.node.name: s for s in compiled.program.steps if s.node.op_type == "Conv"}


def _tile(step) -> str:
    return next(k.function[len(_gemm.CONFIG_PREFIX):] for k in step.kernels if k.function.startswith(_gemm.CONFIG_PREFIX))


def test_tuning_file_changes_each_choice_and_matches_onnxruntime(target, tmp_path):
    name = target.split("@")[0]
    model = three_convs()
    path = tmp_path / "three.onnx"
    onnx.save(model, str(path))
    default = _steps(path, name)
    assert all(s.node.attrs.get("algorithm") != "direct" for s in default.values())
    other_tile = next(t.name for t in _gemm.runnable(resolve(name)) if t.name != _tile(default["conv_b"]))
    other_algorithm = "im2col" if default["conv_c"].node.attrs["algorithm"] == "winograd_f4x3" else "winograd_f4x3"
    chosen = {"conv_a": {"algorithm": "direct"}, "conv_b": {"algorithm": "im2col", "tile": other_tile},
              "conv_c": {"algorithm": other_algorithm}}
    entries = [tuning.Entry(resolve(name).name, tuning.cpu_model(), tuning.signature(default[n].node), c)
               for n, c in chosen.items()]
    file = tmp_path / "three.tuning.json"
    tuning.write(file, entries)
    tuned = _steps(path, name, file)
    assert tuned["conv_a"].node.attrs["algorithm"] == "direct"
    assert not any(k.function.startswith(_gemm.CONFIG_PREFIX) for k in tuned["conv_a"].kernels)
    assert _tile(tuned["conv_b"]) == other_tile
    assert tuned["conv_c"].node.attrs["algorithm"] == other_algorithm
    assert any(k.family == "f32-winograd" for k in tuned["conv_c"].kernels) == (other_algorithm == "winograd_f4x3")
    report = check_model(model, {"x": rand(1, 8, 12, 12)}, target, tmp_path, rtol=1e-4, atol=1e-4, tuning=file)
    assert report["tuning"]["entries"] == 3 and report["tuning"]["ignored"] == 0
    assert next(p for p in report["passes"] if p["pass"] == "choose_winograd")["tuned"] == 3


def test_file_round_trips_and_merges(tmp_path):
    file = tmp_path / "t.json"
    mine = tuning.Entry("x86_64", "CPU A", "Conv float32 x[1]", {"algorithm": "direct"}, {"default_ms": 1.5})
    theirs = tuning.Entry("x86_64", "CPU B", "Conv float32 x[1]", {"tile": "6x16__avx2"})
    tuning.write(file, [mine, theirs])
    assert tuning.read_entries(file) == [mine, theirs]
    assert tuning.read_entries(file)[0].measured == {"default_ms": 1.5}
    newer = tuning.Entry("x86_64", "CPU A", "Conv float32 x[1]", {"algorithm": "im2col"})
    tuning.write(file, [newer], tuning.read_entries(file))  # replaces its own, keeps CPU B's
    assert tuning.read_entries(file) == [theirs, newer]
    loaded = tuning.load(file, "x86_64", "CPU A")
    assert loaded.choices == (("Conv float32 x[1]", (("algorithm", "im2col"),)),) and loaded.ignored == 1


@pytest.mark.parametrize("text,needle", [
    ("{not json", "not JSON"),
    ('{"format": "something else"}', "not a tuning file"),
    ('{"format": "mlcc-tuning", "version": 99, "entries": []}', "version 99"),
    ('{"format": "mlcc-tuning", "version": 1, "entries": [{"target": "host", "cpu": "c", "signature": "s", '
     '"choice": {"algorithm": "fft"}}]}', "unknown algorithm 'fft'"),
    ('{"format": "mlcc-tuning", "version": 1, "entries": [{"target": "host", "cpu": "c", "signature": "s", '
     '"choice": {"tile": "99x99__avx9"}}]}', "unknown tile"),
    ('{"format": "mlcc-tuning", "version": 1, "entries": [{"cpu": "c", "signature": "s", "choice": {}}]}', "entry 0"),
])
def test_bad_tuning_file_is_one_error_line(tmp_path, text, needle):
    path = tmp_path / "m.onnx"
    onnx.save(three_convs(), str(path))
    (tmp_path / "bad.json").write_text(text)
    proc = mlcc("build", path, "-o", tmp_path / "out", "--tuning", tmp_path / "bad.json")
    assert_one_line_error(proc, "bad.json", needle)
    assert not (tmp_path / "out").exists()


def test_foreign_entries_are_ignored_with_a_note(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(three_convs(), str(path))
    default = _steps(path, "host")
    host = resolve("host").name
    sig = tuning.signature(default["conv_a"].node)
    tuning.write(tmp_path / "t.json", [tuning.Entry(host, "Some Other CPU", sig, {"algorithm": "direct"}),
                                       tuning.Entry("wasm32", tuning.cpu_model(), sig, {"algorithm": "direct"})])
    assert _steps(path, "host", tmp_path / "t.json")["conv_a"].node.attrs["algorithm"] != "direct"
    proc = mlcc("build", path, "-o", tmp_path / "out", "--tuning", tmp_path / "t.json")
    assert proc.returncode == 0, proc.stderr
    assert "note:" in proc.stderr and "2 tuning entries for other targets or CPUs ignored" in proc.stderr


def test_tune_on_a_tiny_model_writes_a_file_a_build_takes(tmp_path):
    """One 1x1 convolution (32 -> 32 channels: no Winograd, too wide for direct): its tile is the only choice."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((32, 32, 1, 1)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="pointwise")], "tiny",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 8, 8])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "tiny.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "tiny.tuning.json"
    proc = mlcc("tune", path, "-o", out, "--rounds", "2", "--repeat", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    tiles = [t.name for t in _gemm.runnable(resolve("host")) if t.isa == _gemm.tile_for(resolve("host")).isa]
    assert result["layers"] == 1 and result["builds"] == len(tiles)
    row = result["rows"][0]
    assert sorted(c["tile"] for c in row["candidates"]) == sorted(tiles)
    assert len(row["ms"]) == len(tiles) and all(ms > 0 for ms in row["ms"])
    entries = tuning.read_entries(out)  # valid, whatever the noise decided
    assert len(entries) == result["tuned_layers"] == (1 if row["best"] else 0)
    proc = mlcc("build", path, "-o", tmp_path / "out", "--tuning", out)
    assert proc.returncode == 0, proc.stderr
    assert "note:" not in proc.stderr


def test_tune_refuses_a_target_it_cannot_time(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(three_convs(), str(path))
    assert_one_line_error(mlcc("tune", path, "-t", "wasm32", "-o", tmp_path / "t.json"), "wasm32")
    assert not (tmp_path / "t.json").exists()
