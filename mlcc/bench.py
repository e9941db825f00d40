"""`mlcc bench`: latency of a built model on its target's runner, and a per-step profile.

Host: runtime_c/bench/mlcc_bench.c, a small library, times each call of the built libNAME.so's NAME_run_v
inside C (clock_gettime around the call). wasm32: a call from Python into wasmtime costs tens of
microseconds, so the folder's sources are relinked with the harness into one module that times each call
inside (WASI's monotonic clock), with the same compiler flags as the artifact. The overhead is measured by
calls with NULL arguments, which the model refuses at once. The profile relinks the folder's sources with
-DMLCC_PROFILE, which turns the MLCC_PROFILE_BEGIN/END hooks around each step of NAME.c into clock reads
(on the clock `step_clock` picks: the thread's CPU time where one thread runs on the host, else wall time);
the kernels come from the toolchain's object cache when the folder's runtime is this mlcc's (they never see
those defines), so repeated rounds compile only NAME.c and the harness.
Each runner registers a timer and a profiler, as runners register loaders.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from . import paths, runners, toolchain
from .errors import RunError, UsageError
from .targets import Target, resolve

HARNESS = "bench/mlcc_bench.c"
OVERHEAD_CALLS = 201

_TIMERS: dict[str, Callable] = {}
_PROFILERS: dict[str, Callable] = {}

# The clocks a step can be timed on, as the profiles say which
CLOCKS = {"thread_cpu": "the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), less an empty step's reading",
          "wall": "wall time (monotonic clock)"}
_THREAD_CPU_RUNNERS = ("host",)  # runners whose profiled build reads the thread CPU clock in C, cheaply enough


def step_clock(target: Target, threads: int = 1) -> str:
    """The clock per-step times are read on (a key of CLOCKS), the one place that chooses: the calling thread's
    CPU time where one thread runs the steps and the runner has that clock in C, since a shared machine's other
    load puts 2-10x a step's work into its wall time; wall time for a parallel run (a step's time is its span
    across the threads) and on wasm32 (WASI has no CPU clock; the host's, lent as an import, costs tens of us
    a read)."""
    return "thread_cpu" if threads == 1 and target.runner in _THREAD_CPU_RUNNERS else "wall"


def _timer(runner: str):
    def wrap(f):
        _TIMERS[runner] = f
        return f
    return wrap


def _profiler(runner: str):
    def wrap(f):
        _PROFILERS[runner] = f
        return f
    return wrap


def random_feeds(report: dict, seed: int = 0) -> dict[str, np.ndarray]:
    from .cli import random_inputs

    return random_inputs(report["inputs"], seed)


def _check_counts(warmup: int, repeat: int) -> None:
    if warmup < 0:
        raise UsageError(f"--warmup {warmup}: must be 0 or more")
    if repeat < 1:
        raise UsageError(f"--repeat {repeat}: must be 1 or more")


def _summary(times_ns: np.ndarray) -> dict:
    ms = np.asarray(times_ns, dtype=np.float64) / 1e6
    return {"median_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90)),
            "min_ms": float(ms.min()), "mean_ms": float(ms.mean())}


def bench(folder: str | Path, warmup: int = 5, repeat: int = 30, seed: int = 0, threads: int = 1) -> dict:
    """Median and p90 latency of the model built in `folder`, with its arena, weights and code bytes;
    threads > 1 times NAME_run_parallel on the runtime's thread pool (host)."""
    _check_counts(warmup, repeat)
    if threads < 1:
        raise UsageError(f"--threads {threads}: must be 1 or more")
    folder = Path(folder)
    report = runners.read_report(folder)
    target = resolve(report["target"])
    timer = _TIMERS.get(target.runner)
    if timer is None:
        raise UsageError(f"mlcc bench cannot time target {target.name!r} (runner {target.runner!r}); "
                         f"it times runners: {', '.join(_TIMERS)}")
    if threads != 1 and target.runner not in _THREADED:
        raise UsageError(f"mlcc bench --threads {threads}: runner {target.runner!r} runs one thread; "
                         f"threads run on: {', '.join(_THREADED)}")
    kwargs = {"threads": threads} if threads != 1 else {}
    times_ns, overhead_ns, clock, *cpu = timer(folder, report, target, random_feeds(report, seed), warmup, repeat,
                                               **kwargs)
    result = {"folder": str(folder), "name": report["name"], "target": target.name, "runner": target.runner,
              "threads": threads, "clock": clock, "warmup": warmup, "repeat": repeat, **_summary(times_ns),
              "overhead_ms": overhead_ns / 1e6, "times_ms": [round(t / 1e6, 6) for t in times_ns],
              "flops": report.get("flops", 0), "arena_bytes": report["arena_bytes"],
              "weights_bytes": report["weights_bytes"], "code_bytes": report["code_bytes"]}
    result["gflops_per_s"] = result["flops"] / (result["median_ms"] * 1e6) if result["median_ms"] > 0 else 0.0
    if cpu:  # the thread's CPU time too, which a shared machine's other load barely changes
        cpu_ns, cpu_overhead_ns = cpu
        # Less what reading the CPU clock costs (a refused call's CPU time): on wasm32 each read is a call out
        # to Python, tens of microseconds, which would otherwise double a small model's CPU time.
        net_ns = cpu_ns.astype(np.float64) - cpu_overhead_ns
        summary = _summary(net_ns)
        result.update(cpu_median_ms=summary["median_ms"], cpu_p90_ms=summary["p90_ms"],
                      cpu_overhead_ms=cpu_overhead_ns / 1e6, cpu_times_ms=[round(t / 1e6, 6) for t in net_ns])
    return result


def profile(folder: str | Path, warmup: int = 5, repeat: int = 30, seed: int = 0, threads: int = 1) -> dict:
    """Per-step times of an instrumented build of `folder`'s sources: median over `repeat` calls, on the clock
    step_clock picks (result["clock"]); threads > 1 runs NAME_run_parallel on the runtime's pool (host), each
    step timed from its start to its last task's end."""
    _check_counts(warmup, repeat)
    folder = Path(folder)
    report = runners.read_report(folder)
    target = resolve(report["target"])
    steps = report.get("steps")
    if steps is None:
        raise UsageError(f"{folder}/report.json lists no steps: rebuild it with this mlcc to profile it")
    profiler = _PROFILERS.get(target.runner)
    if profiler is None:
        raise UsageError(f"mlcc bench --profile cannot profile target {target.name!r} (runner {target.runner!r}); "
                         f"it profiles runners: {', '.join(_PROFILERS)}")
    if threads != 1 and (target.runner not in _THREADED or toolchain.THREAD_POOL not in report.get("kernel_families", [])):
        raise UsageError(f"mlcc bench --profile --threads {threads}: {target.name} has no runtime thread pool to "
                         f"profile on (threads run on runners: {', '.join(_THREADED)})")
    feeds = random_feeds(report, seed)
    kwargs = {"threads": threads} if threads != 1 else {}
    total_ns, steps_ns, clock, read_ns = profiler(folder, report, target, feeds, warmup, repeat, max(len(steps), 1),
                                                  **kwargs)
    steps_ns = steps_ns[:, :len(steps)].astype(np.float64)
    step_ms = np.median(steps_ns, axis=0) / 1e6
    timed_ms = float(step_ms.sum())
    # A sum of medians is not the median of sums: the total is the steps plus the median untimed rest, less the
    # hooks' own clock reads (two a step, each about an empty step's reading: a thread CPU clock read is a
    # system call, on a VM as long as a small step).
    hooks_ns = 2.0 * read_ns * len(steps)
    rest_ns = max(0.0, float(np.median(total_ns.astype(np.float64) - steps_ns.sum(axis=1))) - hooks_ns)
    total_ms = timed_ms + rest_ns / 1e6
    rows = []
    for index, (step, ms) in enumerate(zip(steps, step_ms)):
        rows.append({"step": index, "node": step["node"], "op": step["op"], "ms": float(ms),
                     "share": float(ms) / timed_ms if timed_ms > 0 else 0.0, "flops": step["flops"],
                     "gflops_per_s": step["flops"] / (ms * 1e6) if ms > 0 else 0.0})
    return {"folder": str(folder), "name": report["name"], "target": target.name, "warmup": warmup,
            "repeat": repeat, "threads": threads, "clock": clock, "total_ms": total_ms, "steps_ms": timed_ms,
            "measured_total_ms": float(np.median(total_ns)) / 1e6, "flops": report.get("flops", 0),
            "rows": rows}


# --- host: the harness library times calls inside C ------------------------------------------------

_HARNESS_CDEF = """
int mlcc_bench_time(int (*run)(const void *const *, void *const *, void *), const void *const *inputs,
                    void *const *outputs, void *arena, int warmup, int repeat, uint64_t *ns, uint64_t *cpu_ns);
int mlcc_bench_time_parallel(int (*run)(const void *const *, void *const *, void *, const void *),
                             const void *const *inputs, void *const *outputs, void *arena, const void *parallel,
                             int warmup, int repeat, uint64_t *ns, uint64_t *cpu_ns);
"""
_THREADED = ("host",)  # runners whose timer takes threads
_LINKED_CDEF = """
uint64_t mlcc_bench_step_clock(int thread_cpu);
int mlcc_bench_linked(const void *const *inputs, void *const *outputs, void *arena, int repeat,
                      uint64_t *total_ns, uint64_t *cpu_ns, uint64_t *steps_ns);
"""
_LINKED_PARALLEL_CDEF = """
int mlcc_bench_linked_parallel(const void *const *inputs, void *const *outputs, void *arena, unsigned threads,
                               int repeat, uint64_t *total_ns, uint64_t *cpu_ns, uint64_t *steps_ns);
int mlcc_bench_profile_tasks(uint64_t *calls, uint64_t *tasks, uint64_t *busy_ns);
int mlcc_bench_linked_serial(const void *const *inputs, void *const *outputs, void *arena, unsigned threads,
                             int repeat, uint64_t *total_ns, uint64_t *steps_ns, uint64_t *task_ns);
"""
_SERIAL_TASKS = 64  # mlcc_bench.c's SERIAL_TASKS: tasks per step timed one by one
_PROFILE_SLOTS = 8  # mlcc_bench.c's PROFILE_SLOTS: threads whose time in tasks is told apart


def _harness_source() -> Path:
    return paths.runtime_dir() / HARNESS


def _harness_library(target: Target) -> Path:
    """runtime_c/bench/mlcc_bench.c as a shared library for `target`, cached by source and flags."""
    flags = toolchain.compile_flags(target, [])
    key = hashlib.sha256("\0".join([toolchain.zig_version(), _harness_source().read_text(), *flags]).encode()).hexdigest()[:24]
    library = paths.cache_dir() / "bench" / target.name / f"libmlcc_bench_{key}.so"
    if not library.exists():
        library.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="mlcc-bench-") as tmp:
            staged = Path(tmp) / library.name
            toolchain._run([*toolchain.zig("cc"), *flags, "-shared", str(_harness_source()), "-o", str(staged)], cwd=tmp)
            staged.replace(library)
    return library


def _pointer_tables(ffi, inputs: list[np.ndarray], outputs: list[np.ndarray]):
    in_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in inputs] or [ffi.NULL])
    out_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in outputs] or [ffi.NULL])
    return in_ptrs, out_ptrs


def _host_buffers(report: dict, feeds: dict[str, np.ndarray]):
    from .runners.host import aligned_empty

    inputs = [np.ascontiguousarray(feeds[s["name"]], dtype=s["dtype"]) for s in report["inputs"]]
    outputs = [np.empty(o["shape"], dtype=o["dtype"]) for o in report["outputs"]]
    return inputs, outputs, aligned_empty(max(report["arena_bytes"], 1))


class HostTimed:
    """A host folder's library and the harness loaded once: `run(warmup, repeat)` times `repeat` calls, giving
    each one's wall and thread CPU nanoseconds (with threads, the process's CPU time), so a caller can alternate
    short rounds with a peer without loading either again (python -m benchmarks); `overhead()` is what a refused
    call reads on both clocks."""

    def __init__(self, folder: Path, report: dict, target: Target, feeds: dict, threads: int = 1):
        self.name, self.threads = report["name"], threads
        self.model = model = runners.load(folder, threads=threads)
        ffi = self.ffi = model.ffi
        ffi.cdef(_HARNESS_CDEF)
        harness = ffi.dlopen(str(_harness_library(target)))
        self._buffers = _host_buffers(report, feeds)
        self._ptrs = _pointer_tables(ffi, self._buffers[0], self._buffers[1])
        self._arena = ffi.cast("void *", self._buffers[2].ctypes.data)
        if threads == 1:
            self._entry, self._time_calls = model.entry, harness.mlcc_bench_time
        else:
            self._entry = ffi.cast("int (*)(const void *const *, void *const *, void *, const void *)",
                                   model.parallel_entry)

            def time_calls(run, inputs, outputs, arena, *counts):
                return harness.mlcc_bench_time_parallel(run, inputs, outputs, arena, model.parallel, *counts)
            self._time_calls = time_calls

    def run(self, warmup: int, repeat: int) -> tuple[np.ndarray, np.ndarray]:
        ffi = self.ffi
        ns, cpu_ns = ffi.new("uint64_t[]", max(repeat, 1)), ffi.new("uint64_t[]", max(repeat, 1))
        status = self._time_calls(self._entry, *self._ptrs, self._arena, warmup, repeat, ns, cpu_ns)
        if status != 0:
            raise RunError(f"{self.name}_run_v returned status {status}")
        return _u64s(ffi, ns, repeat), _u64s(ffi, cpu_ns, repeat)

    def overhead(self) -> tuple[float, float]:
        """Median wall and CPU nanoseconds of a refused call (NULL arguments: the harness's own cost)."""
        ffi = self.ffi
        ns, cpu_ns = ffi.new("uint64_t[]", OVERHEAD_CALLS), ffi.new("uint64_t[]", OVERHEAD_CALLS)
        self._time_calls(self._entry, ffi.NULL, ffi.NULL, ffi.NULL, 10, OVERHEAD_CALLS, ns, cpu_ns)
        return float(np.median(_u64s(ffi, ns, OVERHEAD_CALLS))), float(np.median(_u64s(ffi, cpu_ns, OVERHEAD_CALLS)))

    def close(self) -> None:
        self.model.close()


@_timer("host")
def _time_host(folder: Path, report: dict, target: Target, feeds: dict, warmup: int, repeat: int, threads: int = 1):
    timed = HostTimed(folder, report, target, feeds, threads)
    times, cpu = timed.run(warmup, repeat)
    overhead, cpu_overhead = timed.overhead()
    timed.close()
    clock = "clock_gettime(CLOCK_MONOTONIC) around each call, in C"
    if threads != 1:
        clock += f"; {report['name']}_run_parallel on the runtime's pool of {threads} threads"
    return times, overhead, clock, cpu, cpu_overhead


def _u64s(ffi, buffer, count: int) -> np.ndarray:
    """The first `count` values of a cffi uint64_t array, copied out."""
    return np.frombuffer(ffi.buffer(buffer, 8 * count), dtype=np.uint64).copy()


def _runtime_is_current(folder: Path, report: dict) -> bool:
    """Whether the folder's copy of the runtime is this mlcc's, byte for byte: then the toolchain's kernel
    objects are what compiling the copy would give (the bench and profiling defines reach only NAME.c and
    the harness), and a folder built by another mlcc version is still timed with its own kernels."""
    runtime = paths.runtime_dir()
    for file in report["files"]:
        if file.startswith("mlcc_runtime/"):
            current = runtime / file.removeprefix("mlcc_runtime/")
            if not current.is_file() or (folder / file).read_bytes() != current.read_bytes():
                return False
    return True


def _compile_linked(folder: Path, report: dict, target: Target, steps: int | None, out: Path, link: list[str],
                    cached_kernels: bool | None = None) -> None:
    """The folder's own sources plus the harness, linked into `out`; with `steps`, the profiling hooks on.
    cached_kernels: the kernels from the toolchain's object cache (compiled once per target and source), only
    NAME.c compiled here, so alternating rounds and a tuner's many variants compile their kernels once;
    None: whenever the folder's runtime is this mlcc's."""
    sources = [f for f in report["files"] if f.endswith(".c")]
    if cached_kernels is None:
        cached_kernels = _runtime_is_current(folder, report)
    if cached_kernels:  # the folder's own C (NAME.c, and a caller's wrapper beside it) and the cached kernels
        own = [f for f in sources if not f.startswith("mlcc_runtime/") and not f.endswith("_runner.c")]
        sources = [*own, *map(str, toolchain.kernel_objects(target, report["kernel_families"]))]
    defines = [f"-DMLCC_BENCH_RUN_V={report['name']}_run_v"]
    pool = not target.is_wasm and toolchain.THREAD_POOL in report["kernel_families"]
    if pool:  # mlcc_bench_linked_parallel on the runtime's pool (linked with the kernels)
        defines.append(f"-DMLCC_BENCH_RUN_PARALLEL={report['name']}_run_parallel")
        link = [*link, "-lpthread"]
    if steps is not None:
        defines += ["-DMLCC_PROFILE", f"-DMLCC_PROFILE_STEPS={steps}"]
    flags = toolchain.compile_flags(target, ["mlcc_runtime/include", "mlcc_runtime/kernels"])
    toolchain._run([*toolchain.zig("cc"), *flags, *defines, *sources, str(_harness_source()), "-o", str(out),
                    *link, *target.ldflags, "-lm"], cwd=str(folder))


class HostProfiled:
    """A host folder's sources relinked with the profiling hooks and loaded: `run(count)` times `count` calls,
    giving each call's total and per-step nanoseconds, the steps on `self.clock` (step_clock). Several stay
    loaded at once, so `mlcc tune` can alternate between builds in one process."""

    def __init__(self, folder: Path, report: dict, target: Target, feeds: dict, steps: int,
                 cached_kernels: bool | None = None, threads: int = 1, clock: str | None = None):
        """clock: a key of CLOCKS for the steps, step_clock's choice when None (benchmarks.threads times one
        thread's steps on wall time too, like the N-thread build's)."""
        from cffi import FFI

        self.name, self.steps, self.threads = report["name"], steps, threads
        with tempfile.TemporaryDirectory(prefix="mlcc-profile-") as tmp:
            library = Path(tmp) / f"lib{report['name']}_profile.so"
            _compile_linked(folder, report, target, steps, library, ["-shared"], cached_kernels)
            self.ffi = ffi = FFI()
            ffi.cdef(_LINKED_CDEF + (_LINKED_PARALLEL_CDEF if threads != 1 else ""))
            self.lib = ffi.dlopen(str(library))  # stays mapped after the file is removed
        self.clock = clock or step_clock(target, threads)
        self.clock_cost_ns = int(self.lib.mlcc_bench_step_clock(int(self.clock == "thread_cpu")))
        self._buffers = _host_buffers(report, feeds)
        self._ptrs = _pointer_tables(ffi, self._buffers[0], self._buffers[1])
        self._arena = ffi.cast("void *", self._buffers[2].ctypes.data)

    def run(self, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each call's wall time, its per-step times (on self.clock) and the thread's CPU time (with threads,
        the process's), in nanoseconds."""
        ffi, steps = self.ffi, self.steps
        total, cpu = ffi.new("uint64_t[]", max(count, 1)), ffi.new("uint64_t[]", max(count, 1))
        per_step = ffi.new("uint64_t[]", max(count, 1) * steps)
        if self.threads != 1:
            status = self.lib.mlcc_bench_linked_parallel(*self._ptrs, self._arena, self.threads, count, total, cpu,
                                                         per_step)
            if status == -1:
                raise RunError(f"could not start a pool of {self.threads} threads")
        else:
            status = self.lib.mlcc_bench_linked(*self._ptrs, self._arena, count, total, cpu, per_step)
        if status != 0:
            raise RunError(f"{self.name}_run_v returned status {status}")
        return _u64s(ffi, total, count), _u64s(ffi, per_step, count * steps).reshape(count, steps), _u64s(ffi, cpu, count)

    def run_tasks(self, count: int) -> tuple[np.ndarray, ...]:
        """`run(count)` (threads > 1 only) and, per call and step, its parallel-for calls and tasks ([count,
        steps]) and each thread's nanoseconds inside tasks ([count, steps, slots], slot 0 the caller's)."""
        ffi, steps, n = self.ffi, self.steps, max(count, 1)
        calls, tasks = ffi.new("uint64_t[]", n * steps), ffi.new("uint64_t[]", n * steps)
        busy = ffi.new("uint64_t[]", n * steps * _PROFILE_SLOTS)
        self.lib.mlcc_bench_profile_tasks(calls, tasks, busy)
        try:
            timed = self.run(count)
        finally:
            self.lib.mlcc_bench_profile_tasks(ffi.NULL, ffi.NULL, ffi.NULL)
        return (*timed, _u64s(ffi, calls, count * steps).reshape(count, steps),
                _u64s(ffi, tasks, count * steps).reshape(count, steps),
                _u64s(ffi, busy, count * steps * _PROFILE_SLOTS).reshape(count, steps, _PROFILE_SLOTS))

    def run_serial(self, count: int) -> tuple[np.ndarray, ...]:
        """`count` calls with the steps cut into tasks as for `threads` threads, every task run in turn on the
        calling thread: each call's ns, per step ([count, steps]), its tasks ([count, steps]) and each task's
        ns ([count, steps, 64], the first 64 of a step)."""
        ffi, steps, n = self.ffi, self.steps, max(count, 1)
        total, per_step = ffi.new("uint64_t[]", n), ffi.new("uint64_t[]", n * steps)
        calls, tasks, busy = (ffi.new("uint64_t[]", n * steps), ffi.new("uint64_t[]", n * steps),
                              ffi.new("uint64_t[]", n * steps * _PROFILE_SLOTS))
        task_ns = ffi.new("uint64_t[]", n * steps * _SERIAL_TASKS)
        self.lib.mlcc_bench_profile_tasks(calls, tasks, busy)
        try:
            status = self.lib.mlcc_bench_linked_serial(*self._ptrs, self._arena, self.threads, count, total, per_step,
                                                       task_ns)
        finally:
            self.lib.mlcc_bench_profile_tasks(ffi.NULL, ffi.NULL, ffi.NULL)
        if status != 0:
            raise RunError(f"{self.name}_run_parallel returned status {status}")
        return (_u64s(ffi, total, count), _u64s(ffi, per_step, count * steps).reshape(count, steps),
                _u64s(ffi, tasks, count * steps).reshape(count, steps),
                _u64s(ffi, task_ns, count * steps * _SERIAL_TASKS).reshape(count, steps, _SERIAL_TASKS))


@_profiler("host")
def _profile_host(folder: Path, report: dict, target: Target, feeds: dict, warmup: int, repeat: int, steps: int,
                  threads: int = 1):
    profiled = HostProfiled(folder, report, target, feeds, steps, threads=threads)
    profiled.run(warmup)
    wall, per_step, cpu = profiled.run(repeat)
    return (cpu if profiled.clock == "thread_cpu" else wall), per_step, profiled.clock, profiled.clock_cost_ns


# --- wasm32 in wasmtime: the folder's sources relinked with the harness, timed inside the module -------

@_timer("wasmtime")
def _time_wasm(folder: Path, report: dict, target: Target, feeds: dict, warmup: int, repeat: int):
    run = _WasmLinked(folder, report, target, feeds, None, max(repeat, OVERHEAD_CALLS))
    run.call(warmup)
    times, cpu, _ = run.call(repeat)
    refused, refused_cpu, _ = run.call(OVERHEAD_CALLS, refuse=True)
    return (times, float(np.median(refused)),
            "WASI monotonic clock around each call, inside the module (relinked with the harness)", cpu,
            float(np.median(refused_cpu)))


@_profiler("wasmtime")
def _profile_wasm(folder: Path, report: dict, target: Target, feeds: dict, warmup: int, repeat: int, steps: int):
    run = _WasmLinked(folder, report, target, feeds, steps, max(warmup, repeat, 1))
    run.call(warmup)
    times, _, per_step = run.call(repeat)
    return times, per_step, step_clock(target), 0


class _WasmLinked:
    """The folder's sources and the harness as one wasm32 module in wasmtime (with WASI for the clock, and
    this thread's CPU clock, which WASI lacks, as an import), inputs, outputs, the arena and the timing arrays
    placed in linear memory above __heap_base."""

    def __init__(self, folder: Path, report: dict, target: Target, feeds: dict, steps: int | None, count: int):
        import wasmtime

        self.report, self.steps = report, steps
        name = report["name"]
        with tempfile.TemporaryDirectory(prefix="mlcc-bench-") as tmp:
            module_path = Path(tmp) / f"{name}_bench.wasm"
            exports = [f"{name}_run_v", "mlcc_bench_linked", "__heap_base"]
            _compile_linked(folder, report, target, steps, module_path, [f"-Wl,--export={e}" for e in exports])
            config = wasmtime.Config()
            config.wasm_simd = True
            engine = wasmtime.Engine(config)
            module = wasmtime.Module.from_file(engine, str(module_path))
        self.store = store = wasmtime.Store(engine)
        store.set_wasi(wasmtime.WasiConfig())
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        linker.define_func("mlcc_bench", "thread_cpu_ns", wasmtime.FuncType([], [wasmtime.ValType.i64()]),
                           time.thread_time_ns)
        ex = linker.instantiate(store, module).exports(store)
        if "_initialize" in ex:
            ex["_initialize"](store)
        self.memory, self.entry = ex["memory"], ex["mlcc_bench_linked"]
        inputs, outputs, _ = _host_buffers(report, feeds)
        layout = _WasmLayout(ex["__heap_base"].value(store))
        in_addrs = [layout.take(a.nbytes) for a in inputs]
        out_addrs = [layout.take(a.nbytes) for a in outputs]
        self.in_table, self.out_table = layout.take(4 * max(len(inputs), 1)), layout.take(4 * max(len(outputs), 1))
        self.total_addr, self.cpu_addr = layout.take(8 * count), layout.take(8 * count)
        self.steps_addr = layout.take(8 * count * (steps or 0))
        self.arena = layout.take(max(report["arena_bytes"], 1))
        have = self.memory.data_len(store)
        if layout.end > have:
            self.memory.grow(store, (layout.end - have + 65535) // 65536)
        self.memory.write(store, np.array(in_addrs or [0], dtype="<u4").tobytes(), self.in_table)
        self.memory.write(store, np.array(out_addrs or [0], dtype="<u4").tobytes(), self.out_table)
        for a, addr in zip(inputs, in_addrs):
            self.memory.write(store, a.tobytes(), addr)

    def call(self, n: int, refuse: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """n timed calls: (wall ns, thread CPU ns, per-step ns when profiling); `refuse` passes NULL inputs,
        which the model refuses at once (the overhead)."""
        status = self.entry(self.store, 0 if refuse else self.in_table, self.out_table, self.arena, n,
                            self.total_addr, self.cpu_addr, self.steps_addr)
        if status != 0 and not refuse:
            raise RunError(f"{self.report['name']}_run_v returned status {status}")
        read = lambda addr, count: np.frombuffer(self.memory.read(self.store, addr, addr + 8 * count), dtype="<u8").astype(np.uint64)
        totals, cpu = read(self.total_addr, n), read(self.cpu_addr, n)
        return totals, cpu, (read(self.steps_addr, n * self.steps).reshape(n, self.steps) if self.steps else None)


class _WasmLayout:
    """Bump allocation of 64-byte aligned blocks in linear memory above __heap_base."""

    def __init__(self, base: int):
        self.end = (base + 63) // 64 * 64

    def take(self, nbytes: int) -> int:
        addr = self.end
        self.end = (addr + nbytes + 63) // 64 * 64
        if self.end > 1 << 32:
            raise RunError(f"the profile needs {self.end} bytes of wasm32 memory, over the 4 GiB limit")
        return addr


# --- Linux cross targets under qemu-user: the runner executable times each call itself ----------------

@_timer("qemu")
def _time_qemu(folder: Path, report: dict, target: Target, feeds: dict, warmup: int, repeat: int):
    model = runners.load(folder)
    inputs, outputs, _ = _host_buffers(report, feeds)
    times = model.time_runs(inputs, outputs, warmup, repeat)
    return times, 0.0, ("CLOCK_MONOTONIC around each call inside NAME_runner under qemu-user: the emulator's "
                        "speed, not the target hardware's")


# --- text output ------------------------------------------------------------------------------------

def format_bench(r: dict) -> str:
    code = ", ".join(f"{k} {v} B" for k, v in r["code_bytes"].items()) or "none"
    gflops = f", {r['gflops_per_s']:.2f} GFLOP/s" if r["flops"] else ""
    return "\n".join([
        f"{r['name']} on {r['target']} ({r['runner']}"
        + (f", {r['threads']} threads" if r.get("threads", 1) != 1 else "")
        + f"): {r['repeat']} timed runs after {r['warmup']} warm-up",
        f"  latency  median {r['median_ms']:.4f} ms, p90 {r['p90_ms']:.4f} ms, min {r['min_ms']:.4f} ms",
        *([f"  cpu      median {r['cpu_median_ms']:.4f} ms, p90 {r['cpu_p90_ms']:.4f} ms ("
            + ("the thread's" if r.get("threads", 1) == 1 else "the process's, every thread's,")
            + f" CPU time, less {r['cpu_overhead_ms'] * 1e3:.3f} us its clock reads cost)"]
          if "cpu_median_ms" in r else []),
        f"  timing   {r['clock']}" + (f"; overhead {r['overhead_ms'] * 1e3:.3f} us per call (a refused call)"
                                         if r["overhead_ms"] else ""),
        f"  compute  {r['flops'] / 1e9:.4f} GFLOP per run{gflops}",
        f"  memory   arena {r['arena_bytes']} B, weights {r['weights_bytes']} B, code: {code}",
    ])


def format_profile(p: dict, top: int = 15) -> str:
    rows = sorted(p["rows"], key=lambda r: -r["ms"])
    threads = f", {p['threads']} threads" if p.get("threads", 1) != 1 else ""
    lines = [f"{p['name']} on {p['target']}{threads}: per-step profile, median of {p['repeat']} runs "
             f"(steps {p['steps_ms']:.4f} ms + untimed {p['total_ms'] - p['steps_ms']:.4f} ms; instrumented call "
             f"{p['measured_total_ms']:.4f} ms)",
             f"  clock: {CLOCKS[p['clock']]}",
             f"{'#':>5}  {'node':<36} {'op':<22} {'ms':>10} {'share':>7} {'GFLOP/s':>9}"]
    for r in rows[:top]:
        gflops = f"{r['gflops_per_s']:9.2f}" if r["flops"] else f"{'-':>9}"
        lines.append(f"{r['step']:>5}  {_clip(r['node'], 36):<36} {_clip(r['op'], 22):<22} {r['ms']:10.4f} "
                     f"{100 * r['share']:6.1f}% {gflops}")
    if len(rows) > top:
        rest = rows[top:]
        lines.append(f"{'':>5}  {f'({len(rest)} more steps)':<36} {'':<22} {sum(r['ms'] for r in rest):10.4f} "
                     f"{100 * sum(r['share'] for r in rest):6.1f}%")
    by_op: dict[str, list[float]] = {}
    for r in rows:
        entry = by_op.setdefault(r["op"], [0.0, 0.0, 0])
        entry[0] += r["ms"]
        entry[1] += r["flops"]
        entry[2] += 1
    lines.append("by op: " + ", ".join(
        f"{op} {100 * ms / p['steps_ms'] if p['steps_ms'] else 0:.1f}% ({n}x"
        + (f", {fl / (ms * 1e6):.1f} GFLOP/s)" if fl and ms else ")")
        for op, (ms, fl, n) in sorted(by_op.items(), key=lambda kv: -kv[1][0])))
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "~"


__all__ = ["bench", "profile", "format_bench", "format_profile", "random_feeds", "step_clock", "CLOCKS"]
