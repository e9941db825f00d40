"""`mlcc bench` on a tiny model: real numbers, consistent statistics, a profile that adds up, one-line errors.
No timed assertions: only relations that hold on any machine."""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli.test_cli import assert_one_line_error, mlcc


def small_model(path):
    """MatMul + Add + Tanh + Softmax on 32x64: a few steps, some FLOPs, a fraction of a millisecond."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="proj"),
             helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
             helper.make_node("Tanh", ["hb"], ["t"], name="act"),
             helper.make_node("Softmax", ["t"], ["y"], name="probs", axis=-1)]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 64])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench")
    model = small_model(tmp / "small.onnx")
    folders = {}
    for target in ("host", "wasm32"):
        proc = mlcc("build", model, "-t", target, "-O0", "-o", tmp / target)
        assert proc.returncode == 0, proc.stderr
        folders[target] = tmp / target
    return folders


@pytest.mark.parametrize("target", ["host", "wasm32"])
def test_bench_json(built, target):
    proc = mlcc("bench", built[target], "--warmup", "2", "--repeat", "15", "--json", "--profile")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    report = json.loads((built[target] / "report.json").read_text())
    assert len(result["times_ms"]) == 15 and all(t > 0 for t in result["times_ms"])
    assert 0 < result["min_ms"] <= result["median_ms"] <= result["p90_ms"]
    assert 0 <= result["overhead_ms"] < result["median_ms"]
    # the thread's CPU time, less its clock reads' cost: positive, and at most the wall time (medians: on wasm32
    # a read is a call out to Python whose cost varies by tens of microseconds from one run to the next)
    assert len(result["cpu_times_ms"]) == 15 and result["cpu_overhead_ms"] > 0
    assert 0 < result["cpu_median_ms"] <= result["median_ms"] + 0.02
    assert result["flops"] == report["flops"] > 0 and result["gflops_per_s"] > 0
    for key in ("arena_bytes", "weights_bytes", "code_bytes"):
        assert result[key] == report[key]
    profile = result["profile"]
    # one thread on the host: the steps on the thread's CPU clock; wasm32 has none (WASI)
    assert profile["clock"] == ("thread_cpu" if target == "host" else "wall")
    assert [r["node"] for r in profile["rows"]] == [s["node"] for s in report["steps"]]
    assert all(r["ms"] >= 0 for r in profile["rows"])
    assert sum(r["share"] for r in profile["rows"]) == pytest.approx(1.0, abs=1e-6)
    # the steps are timed inside the instrumented call: they add up to at most its total, and most of it
    assert 0.5 * profile["total_ms"] <= profile["steps_ms"] <= profile["total_ms"] * 1.0001
    proj = next(r for r in profile["rows"] if r["node"] == "proj")
    assert proj["flops"] == 2 * 32 * 64 * 64


def test_bench_text_and_profile_table(built):
    proc = mlcc("bench", built["host"], "--repeat", "5", "--profile", "--top", "2")
    assert proc.returncode == 0, proc.stderr
    assert "median" in proc.stdout and "p90" in proc.stdout and "arena" in proc.stdout
    assert "per-step profile" in proc.stdout and "(2 more steps)" in proc.stdout and "by op:" in proc.stdout
    assert "clock: the thread's CPU time" in proc.stdout


def test_bench_builds_a_model_file(tmp_path):
    proc = mlcc("bench", small_model(tmp_path / "m.onnx"), "-t", "wasm32", "--repeat", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["target"] == "wasm32"


def test_bench_errors(built, tmp_path):
    assert_one_line_error(mlcc("bench", tmp_path / "nowhere"), "no such build folder")
    assert_one_line_error(mlcc("bench", tmp_path), "report.json")
    assert_one_line_error(mlcc("bench", built["host"], "--repeat", "0"), "--repeat")
    assert_one_line_error(mlcc("bench", built["host"], "--warmup", "-1"), "--warmup")
    assert_one_line_error(mlcc("bench", built["host"], "--repeat", "many"), "--repeat")


def test_bench_threads(built):
    """--threads 2 times NAME_run_parallel on the runtime's pthreads pool (the clock line says so), and so does
    its profile (it says so too); a runner that runs one thread, and 0 threads, are one error line each."""
    proc = mlcc("bench", built["host"], "--warmup", "1", "--repeat", "5", "--threads", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["threads"] == 2 and "small_run_parallel on the runtime's pool of 2 threads" in result["clock"]
    assert len(result["times_ms"]) == 5 and min(result["times_ms"]) > 0
    text = mlcc("bench", built["host"], "--repeat", "3", "--threads", "2", "--profile")
    assert text.returncode == 0 and "(host, 2 threads)" in text.stdout and "the process's" in text.stdout
    assert ", 2 threads: per-step profile" in text.stdout
    assert_one_line_error(mlcc("bench", built["wasm32"], "--threads", "2"), "runs one thread")
    assert_one_line_error(mlcc("bench", built["host"], "--threads", "0"), "--threads")


def test_bench_times_a_cross_target_under_qemu(tmp_path):
    """Linux cross targets are timed by their runner executable under qemu-user; no profile there."""
    model = small_model(tmp_path / "m.onnx")
    proc = mlcc("bench", model, "-t", "aarch64", "--warmup", "1", "--repeat", "4", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert (result["target"], result["runner"]) == ("aarch64", "qemu")
    assert len(result["times_ms"]) == 4 and min(result["times_ms"]) > 0
    assert result["min_ms"] <= result["median_ms"] <= result["p90_ms"]
    assert_one_line_error(mlcc("bench", model, "-t", "aarch64", "--profile"), "cannot profile target 'aarch64'")


def test_profile_builds_take_kernels_from_the_object_cache(built, monkeypatch):
    """A profile relinks only NAME.c and the harness with the kernel objects `mlcc build` cached (no kernel
    compiled again, however many rounds), and the profiled build computes what the artifact does, bit for bit."""
    from mlcc import bench, runners, toolchain

    commands = []
    real_run = toolchain._run
    def run(cmd, cwd=None):
        if "cc" in cmd:  # a compiler call (not `zig version`)
            commands.append(cmd)
        return real_run(cmd, cwd)

    monkeypatch.setattr(toolchain, "_run", run)
    report = runners.read_report(built["host"])
    feeds = bench.random_feeds(report)
    profiled = bench.HostProfiled(built["host"], report, bench.resolve("host"), feeds, len(report["steps"]))
    bench.profile(built["wasm32"], warmup=0, repeat=1)
    assert len(commands) == 2, commands  # one link each: no kernel compiled into the object cache
    for command in commands:
        compiled = [a for a in command if a.endswith(".c")]
        assert not [c for c in compiled if "mlcc_runtime/kernels/" in c], compiled
        assert any(a.endswith(".o") and "objects" in a for a in command), command
    profiled.run(1)
    model = runners.load(built["host"])
    expected = model.run(feeds)
    model.close()
    for spec, got in zip(report["outputs"], profiled._buffers[1]):
        np.testing.assert_array_equal(got, expected[spec["name"]])
