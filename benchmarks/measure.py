"""The four measurements of one model, and this core's peak. Each returns a dict; a failure is a dict with
"error" (one line), never an exception: a row is never hidden.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import onnx

from mlcc import bench as mlcc_bench, runners
from mlcc.pipeline import BuildOptions, build
from mlcc.targets import resolve
from mlcc.verify import compare

HERE = Path(__file__).resolve().parent
WEB = HERE / "web"
ORT_MAX_IR_VERSION = 10
# Outputs must match onnxruntime within these before a latency counts (f32 kernels reorder sums).
RTOL, ATOL = 1e-2, 1e-3


def failure(exc: BaseException) -> dict:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return {"error": f"{type(exc).__name__}: {text[:300]}", "trace": traceback.format_exc(limit=3)}


def input_specs(model: onnx.ModelProto) -> list[dict]:
    inits = {i.name for i in model.graph.initializer}
    specs = []
    for x in model.graph.input:
        if x.name in inits:
            continue
        t = x.type.tensor_type
        specs.append({"name": x.name, "dtype": np.dtype(onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)).name,
                      "shape": [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]})
    return specs


def repeats_for(seconds_per_run: float, budget: float, most: int) -> tuple[int, int]:
    """(warm-up, timed) runs that fit `budget` seconds: at least 3 timed runs, at most `most`."""
    repeat = int(min(most, max(3, budget / max(seconds_per_run, 1e-6))))
    return min(3, max(1, repeat // 5)), repeat


def summary(times_ms: list[float]) -> dict:
    ms = np.asarray(times_ms, dtype=np.float64)
    return {"median_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90)), "runs": int(ms.size)}


def merge_rounds(results: list[dict]) -> dict:
    """One measurement from its rounds: the median of their medians (and of their CPU-time medians), the
    largest p90, every round's median kept; the first error or output mismatch wins."""
    failed = next((r for r in results if "error" in r or r.get("check") == "MISMATCH"), None)
    if failed is not None:
        return failed
    merged = {**results[0], "median_ms": float(np.median([r["median_ms"] for r in results])),
              "p90_ms": max(r["p90_ms"] for r in results), "runs": sum(r["runs"] for r in results),
              "round_medians_ms": [r["median_ms"] for r in results]}
    if all("cpu_median_ms" in r for r in results):
        merged["cpu_median_ms"] = float(np.median([r["cpu_median_ms"] for r in results]))
    return merged


def mlcc_build(model_path: Path, target: str, out: Path) -> dict:
    try:
        started = time.perf_counter()
        folder, report = build(model_path, BuildOptions(target=target, out_dir=out))
        return {"folder": str(folder), "build_s": time.perf_counter() - started, "flops": report["flops"],
                "arena_bytes": report["arena_bytes"], "weights_bytes": report["weights_bytes"],
                "code_bytes": report["code_bytes"], "target": report["target"]}
    except Exception as exc:  # noqa: BLE001 - every failure becomes a table cell
        return failure(exc)


def mlcc_latency(built: dict, feeds: dict, expected: dict | None, budget: float, most: int, threads: int = 1) -> dict:
    """mlcc bench on a built folder, after one untimed run that checks the outputs against onnxruntime;
    threads > 1: NAME_run_parallel on the runtime's pool."""
    if "error" in built:
        return {"error": f"build failed: {built['error'][:200]}"}
    try:
        model = runners.load(built["folder"], threads=threads)
        started = time.perf_counter()
        got = model.run(feeds)
        first = time.perf_counter() - started
        check = _check(got, expected)
        if threads != 1:
            model.close()  # its pool's workers: bench starts its own
        del model
        warmup, repeat = repeats_for(first, budget, most)
        result = mlcc_bench.bench(built["folder"], warmup, repeat, threads=threads)
        cpu = {"cpu_median_ms": result["cpu_median_ms"]} if "cpu_median_ms" in result else {}
        return {"median_ms": result["median_ms"], "p90_ms": result["p90_ms"], "runs": repeat,
                "overhead_ms": result["overhead_ms"], "clock": result["clock"], **cpu, **check}
    except Exception as exc:  # noqa: BLE001
        return failure(exc)


def _check(got: dict, expected: dict | None) -> dict:
    if expected is None:
        return {"check": "no reference"}
    worst = 0.0
    ok = True
    for name, value in got.items():
        if name in expected:
            c = compare(value, expected[name], RTOL, ATOL)
            ok &= c.ok
            worst = max(worst, c.max_abs)
    return {"check": "ok" if ok else "MISMATCH", "max_abs_err": worst}


def ort_session(model_path: Path, profile_prefix: str | None = None, threads: int = 1):
    """onnxruntime as the suite measures it: one thread (or `threads` intra-op threads), sequential, every
    graph optimisation; with profile_prefix, also its per-node profiler (files named after the prefix,
    written by end_profiling)."""
    import onnxruntime as ort

    model = onnx.load(str(model_path), load_external_data=False)
    if model.ir_version > ORT_MAX_IR_VERSION:  # onnx's helpers stamp the newest IR; onnxruntime may lag
        model.ir_version = ORT_MAX_IR_VERSION
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if profile_prefix is not None:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    serialized = model.SerializeToString()
    del model
    return ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])


def ort_latency(model_path: Path, feeds: dict, budget: float, most: int, threads: int = 1) -> tuple[dict, dict | None]:
    """onnxruntime, one thread (or `threads` intra-op threads), all graph optimisations: (timing, outputs)
    with each session.run timed."""
    try:
        session = ort_session(model_path, threads=threads)
        names = [o.name for o in session.get_outputs()]
        started = time.perf_counter()
        outputs = dict(zip(names, session.run(names, feeds)))
        warmup, repeat = repeats_for(time.perf_counter() - started, budget, most)
        for _ in range(warmup):
            session.run(names, feeds)
        times = []
        for _ in range(repeat):
            started = time.perf_counter_ns()
            session.run(names, feeds)
            times.append((time.perf_counter_ns() - started) / 1e6)
        return summary(times), outputs
    except Exception as exc:  # noqa: BLE001
        return failure(exc), None


class OrtTimed:
    """onnxruntime's session made once (one thread, or `threads` intra-op threads) for alternating rounds: each
    session.run timed on the wall clock and on the calling thread's CPU clock (one thread runs its nodes on the
    caller), less the median reading of the two clocks around nothing. `outputs`: the first run's."""

    def __init__(self, model_path: Path, feeds: dict, threads: int = 1):
        self.session = ort_session(model_path, threads=threads)
        self.names = [o.name for o in self.session.get_outputs()]
        self.feeds = feeds
        started = time.perf_counter()
        self.outputs = dict(zip(self.names, self.session.run(self.names, feeds)))
        self.first_s = time.perf_counter() - started
        empty = [self._timed(lambda: None) for _ in range(201)]
        self.read_ns = (float(np.median([w for w, _ in empty])), float(np.median([c for _, c in empty])))

    @staticmethod
    def _timed(call) -> tuple[int, int]:
        cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
        call()
        wall, cpu = time.perf_counter_ns() - wall, time.thread_time_ns() - cpu
        return wall, cpu

    def run(self, warmup: int, repeat: int) -> tuple[np.ndarray, np.ndarray]:
        """`repeat` runs after `warmup`: each one's wall and thread CPU milliseconds."""
        for _ in range(warmup):
            self.session.run(self.names, self.feeds)
        times = np.array([self._timed(lambda: self.session.run(self.names, self.feeds)) for _ in range(repeat)],
                         dtype=np.float64)
        return (times[:, 0] - self.read_ns[0]) / 1e6, (times[:, 1] - self.read_ns[1]) / 1e6


class MlccTimed:
    """mlcc's host build loaded once (mlcc bench's harness) for alternating rounds; its outputs checked against
    onnxruntime's by one untimed run first (`check`). run() as OrtTimed's, the CPU time less the harness's."""

    def __init__(self, built: dict, feeds: dict, expected: dict | None):
        folder = Path(built["folder"])
        report = runners.read_report(folder)
        self.timed = mlcc_bench.HostTimed(folder, report, resolve(report["target"]), feeds)
        started = time.perf_counter()
        got = self.timed.model.run(feeds)
        self.first_s = time.perf_counter() - started
        self.check = _check(got, expected)
        self.overhead_ns = self.timed.overhead()

    def run(self, warmup: int, repeat: int) -> tuple[np.ndarray, np.ndarray]:
        wall, cpu = self.timed.run(warmup, repeat)
        return wall.astype(np.float64) / 1e6, (cpu.astype(np.float64) - self.overhead_ns[1]) / 1e6

    def close(self) -> None:
        self.timed.close()


def interleaved_summary(samples: list[tuple[float, float]]) -> dict:
    """Medians of a side's (wall ms, CPU ms) runs, interleaved with its peers' (benchmarks/__main__.time_host)."""
    if not samples:
        return {"error": "no timed runs"}
    wall = [w for w, _ in samples]
    return {**summary(wall), "cpu_median_ms": float(np.median([c for _, c in samples]))}


def block_ratios(a: list[tuple[float, float]], b: list[tuple[float, float]], blocks: int) -> list[float]:
    """The ratio of CPU-time medians of a to b within each of `blocks` consecutive stretches of both runs."""
    parts_a, parts_b = np.array_split(np.array(a)[:, 1], blocks), np.array_split(np.array(b)[:, 1], blocks)
    return [float(np.median(x) / np.median(y)) for x, y in zip(parts_a, parts_b) if len(x) and len(y)]


def install_web() -> str | None:
    """npm ci into benchmarks/web when onnxruntime-web is missing; None when ready, else why not."""
    if web_available() is None:
        return None
    if shutil.which("npm") is None:
        return "npm is not installed"
    proc = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=WEB, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return f"npm ci failed (registry unreachable?): {lines[-1] if lines else ''}"
    return web_available()


def web_available() -> str | None:
    """None when onnxruntime-web is installed under benchmarks/web, else why not."""
    if not (WEB / "node_modules" / "onnxruntime-web").is_dir():
        return "onnxruntime-web is not installed (npm ci in benchmarks/web failed or was skipped)"
    return None


def web_latency(model_path: Path, specs: list[dict], estimate_s: float, budget: float, most: int) -> dict:
    """onnxruntime-web (wasm, one thread, SIMD) under node, each session.run timed with performance.now (and
    the process's CPU time over it, as mlcc wasm32's thread CPU time), its code optimised before timing."""
    why = web_available()
    if why:
        return {"error": why}
    warmup, repeat = repeats_for(estimate_s, budget, most)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(specs, f)
    try:
        # --no-liftoff: V8 compiles onnxruntime-web's module with TurboFan before the timed runs, as wasmtime
        # compiles mlcc's with Cranelift; else runs use baseline code until tier-up (resnet8: 12 ms a run, then
        # 2.4), and a busy machine's slower background compiles push that into the timed runs
        proc = subprocess.run(["node", "--max-old-space-size=8192", "--no-liftoff", str(WEB / "bench.mjs"),
                               str(model_path), f.name, str(warmup), str(repeat)],
                              capture_output=True, text=True, cwd=WEB,
                              timeout=max(600, 30 * estimate_s * (warmup + repeat)))
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    finally:
        Path(f.name).unlink()
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        return {"error": f"node exit {proc.returncode}: {(lines[-1] if lines else '')[:300]}"}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**summary(result["times_ms"]), "cpu_median_ms": float(np.median(result["cpu_ms"])),
            "version": result["version"]}


def v8_latency(built: dict, estimate_s: float, budget: float, most: int) -> dict:
    """mlcc's wasm32 build (the module mlcc_latency checked and timed in wasmtime) through its ES module under
    node, in V8 as onnxruntime-web runs (benchmarks/web/mlcc.mjs): each run's wall time and the process's CPU
    time over it, as web_latency's, so the two compare in one engine."""
    if "error" in built:
        return {"error": f"build failed: {built['error'][:200]}"}
    folder = Path(built["folder"])
    name = json.loads((folder / "report.json").read_text())["name"]
    warmup, repeat = repeats_for(estimate_s, budget, most)
    try:  # --no-liftoff: compiled by TurboFan before the timed runs (see web_latency)
        proc = subprocess.run(["node", "--max-old-space-size=8192", "--no-liftoff", str(WEB / "mlcc.mjs"),
                               str(folder), name, str(warmup), str(repeat)],
                              capture_output=True, text=True, timeout=max(600, 30 * estimate_s * (warmup + repeat)))
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        return {"error": f"node exit {proc.returncode}: {(lines[-1] if lines else '')[:300]}"}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**summary(result["times_ms"]), "cpu_median_ms": float(np.median(result["cpu_ms"]))}


_PEAK_PROGRAMS: dict[Path, Path] = {}


def _peak_program(work: Path) -> Path:
    """benchmarks/peak.c compiled into work/ (once per run of the suite)."""
    if work not in _PEAK_PROGRAMS:
        exe = work / "peak"
        subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-gnu", "-O2", "-std=c99",
                        "-Wall", "-Wextra", "-Werror", str(HERE / "peak.c"), "-o", str(exe)],
                       check=True, capture_output=True, text=True)
        _PEAK_PROGRAMS[work] = exe
    return _PEAK_PROGRAMS[work]


def peak_gflops(work: Path) -> dict:
    """This core's fp32 FMA peak, per ISA the CPU has (benchmarks/peak.c): the best of 200 runs."""
    from mlcc.targets import _host_cpu_flags

    flags = _host_cpu_flags()
    isas = [isa for isa, needs in (("avx512", {"avx512f"}), ("avx2", {"avx2", "fma"})) if needs <= flags]
    if not isas:
        return {"error": "no AVX2 or AVX-512 on this CPU"}
    try:
        proc = subprocess.run([str(_peak_program(work)), *isas], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        return {"error": f"peak.c: {(exc.stderr or '').strip()[:300]}"}
    return json.loads(proc.stdout)


# A paired peak: the median of this many runs of about a millisecond, taken around each timed round of mlcc
PAIRED_PEAK_RUNS = 40


def paired_peak(work: Path, isa: str) -> float | None:
    """The FMA loop's median rate now (GFLOP/s), under whatever load the machine is under at the moment; None
    when it cannot run."""
    try:
        proc = subprocess.run([str(_peak_program(work)), "--runs", str(PAIRED_PEAK_RUNS), "--median", isa],
                              check=True, capture_output=True, text=True)
    except (subprocess.CalledProcessError, OSError):
        return None
    return json.loads(proc.stdout).get(isa)


def host_isa() -> str:
    """The ISA whose peak the host target's rate is compared to."""
    return "avx512" if "avx512f" in resolve("host").features else "avx2"


def native_levels() -> list[str]:
    """The SIMD levels this machine runs natively, best first: for each SIMD shim a host-runnable target builds
    on (mlcc/simd/manifest.toml), its plainest target, the lowest host_priority (on an AVX-512 x86 machine
    x86_64-avx512 and x86_64, the AVX2 level: x86_64-avx512-vnni builds the suite's float code as
    x86_64-avx512 does, its VNNI is for int8, benchmarks/int8.py). Targets without a shim (SSE2) are left out."""
    from mlcc import kernels
    from mlcc.targets import _host_cpu_flags, all_targets, host_target

    flags, machine = _host_cpu_flags(), host_target().machine
    best: dict[str, object] = {}
    for t in all_targets().values():
        if t.runner != "host" or t.machine != machine or not set(t.cpu_flags) <= flags:
            continue
        isa = kernels.shim_isa(t)
        if isa != "scalar" and (isa not in best or t.host_priority < best[isa].host_priority):
            best[isa] = t
    return [t.name for t in sorted(best.values(), key=lambda t: -t.host_priority)]


def level_isa(target: str) -> str:
    """The SIMD shim a target builds on: the ISA whose FMA peak its rate is compared to (benchmarks/peak.c)."""
    from mlcc import kernels

    return kernels.shim_isa(resolve(target))
