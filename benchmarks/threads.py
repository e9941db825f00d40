"""Two threads against one: mlcc's NAME_run_parallel on the runtime's pool and onnxruntime with
intra_op_num_threads, on the suite's conv nets (issue 23, item 3); and a wasm32-threads build under node on
1 and N threads (NAME.mjs's pool of worker_threads), alternating in one node process (benchmarks/web/threads.mjs).

    python -m benchmarks.threads [--models squeezenet,shufflenet,mobilenet_v2,resnet50] [--rounds 3]
                                 [--no-native | --no-wasm | --steps-only]

Each round times, one after another, onnxruntime with 1 thread, mlcc with 1, mlcc with N, onnxruntime
with N, so a slow spell of this shared VM falls on every column; each time is the median of the rounds'
medians (wall time: CPU time adds up the threads), each ratio the median of the rounds' own ratios. The
load average is recorded before and after each model: with other engineers' jobs on the machine's cores, a
second thread finds a core only part of the time, so the 2-thread speedups here are lower bounds of what an
idle machine gives. Writes benchmarks/results/threads.md.

Per step: instrumented builds (mlcc bench --profile) of NAME_run_v and of NAME_run_parallel on the pool,
alternating round by round in one process; each model's section lists the steps that lose the most against a
perfect split (N-thread time less the 1-thread time / N), and splits that loss by each thread's time inside
the step's tasks (the harness wraps the pool's parallel-for): extra work (memory-bound steps, work repeated
per task), imbalance between threads, and hand-off and waiting. The workers' share of the time in tasks says
whether the second thread found a core at all: on a loaded machine it does not, and the table then shows the
machine, not the code. `--steps-only` prints just these tables (seconds per model).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import onnx

from benchmarks import measure
from benchmarks.models import SUITE

HERE = Path(__file__).resolve().parent
DEFAULT_MODELS = ["squeezenet", "shufflenet", "mobilenet_v2", "resnet50"]
STEP_ROWS = 8  # steps listed per model, those losing the most against a perfect split


def _node_version() -> str:
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "(not installed)"


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def run_model(name: str, threads: int, rounds: int, budget: float, work: Path, log, native: bool = True,
              wasm: bool = True, steps_only: bool = False) -> dict:
    path = work / f"{name}.onnx"
    model = SUITE[name]()
    onnx.save(model, str(path))
    row = {"model": name, "load_before": _load()}
    if native:
        row.update(run_native(name, model, path, threads, rounds, budget, work, log, steps_only))
    del model
    if wasm and not steps_only and "error" not in row:
        log(f"{name}: wasm32-threads under node, {rounds} rounds")
        row.update(run_wasm(name, path, threads, rounds, budget, work, row.get("mlcc1")))
    row["load_after"] = _load()
    return row


def run_wasm(name: str, path: Path, threads: int, rounds: int, budget: float, work: Path,
             native_ms: float | None) -> dict:
    """wasm 1 and wasm N: the rounds' medians of wall time of one wasm32-threads build under node, 1 and N
    threads alternating round by round in one process (which also checks their outputs are the same bits)."""
    built = measure.mlcc_build(path, "wasm32-threads", work / f"{name}-wasm32-threads")
    if "error" in built:
        return {"error": f"wasm32-threads build: {built['error'][:200]}"}
    repeat = max(3, min(50, int(budget * 1000 / (4 * native_ms)))) if native_ms else 10  # wasm: ~4x native
    module = next(Path(built["folder"]).glob("*.mjs"))
    proc = subprocess.run(["node", "--no-liftoff", str(HERE / "web" / "threads.mjs"), str(module), str(rounds),
                           str(repeat), "1", str(threads)], capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        return {"error": f"node: {(lines[-1] if lines else '')[:300]}"}
    one, many = json.loads(proc.stdout.strip().splitlines()[-1])
    if many["threads"] != threads:
        return {"error": f"node ran {many['threads']} threads, not {threads}"}
    return {"wasm1": statistics.median(one["round_medians_ms"]), "wasmN": statistics.median(many["round_medians_ms"]),
            "wasm1_best": min(one["round_minima_ms"]), "wasmN_best": min(many["round_minima_ms"]),
            "wasm_rounds": {"wasm1": [round(v, 3) for v in one["round_medians_ms"]],
                            "wasmN": [round(v, 3) for v in many["round_medians_ms"]]},
            "wasm_worker_tasks": many["workerTasks"]}


def run_native(name: str, model, path: Path, threads: int, rounds: int, budget: float, work: Path, log,
               steps_only: bool = False) -> dict:
    from mlcc.cli import random_inputs

    feeds = random_inputs(measure.input_specs(model), seed=0)
    built = measure.mlcc_build(path, "host", work / f"{name}-host")
    row = {"target": built.get("target", "host")}
    cells: dict[str, list[float]] = {"mlcc1": [], "mlccN": [], "ort1": [], "ortN": []}
    expected = None
    for r in range(0 if steps_only else rounds):
        log(f"{name}: round {r + 1} of {rounds}")
        timing, outputs = measure.ort_latency(path, feeds, budget, 200)
        expected = expected if outputs is None else outputs
        for key, result in (
            ("mlcc1", measure.mlcc_latency(built, feeds, expected, budget, 200)),
            ("mlccN", measure.mlcc_latency(built, feeds, expected, budget, 200, threads=threads)),
            ("ort1", timing),
            ("ortN", measure.ort_latency(path, feeds, budget, 200, threads=threads)[0]),
        ):
            if "error" in result or result.get("check") == "MISMATCH":
                row["error"] = f"{key}: {result.get('error', 'outputs differ from onnxruntime')}"
                return row
            cells[key].append(result["median_ms"])
    if not steps_only:
        row.update({key: statistics.median(values) for key, values in cells.items()})
        # the ratios from each round's own pair, measured one right after the other (ORT 1, mlcc 1, mlcc N,
        # ORT N): the VM's speed swings 1.3-1.5x between spells, and a ratio of medians taken from different
        # rounds can pair a fast spell's time with a slow one's
        row["speedup"] = statistics.median(one / many for one, many in zip(cells["mlcc1"], cells["mlccN"]))
        row["ort_speedup"] = statistics.median(one / many for one, many in zip(cells["ort1"], cells["ortN"]))
        row["ratio"] = statistics.median(mlcc / ort for mlcc, ort in zip(cells["mlccN"], cells["ortN"]))
    # Amdahl's bound from the one-thread profile: the steps NAME_run_parallel splits at most N times faster
    report = json.loads((Path(built["folder"]) / "report.json").read_text())
    row["steps"] = step_profiles(Path(built["folder"]), report, threads, rounds)
    # split: the steps NAME_run_parallel cut into tasks when profiled (not those under MLCC_PARALLEL_MIN_WORK)
    split = sum(s["ms1"] for s in row["steps"] if s["tasks"])
    row["split_share"] = split / sum(s["ms1"] for s in row["steps"])
    row["bound"] = 1.0 / (1.0 - row["split_share"] + row["split_share"] / threads)
    row["workers_share"] = row["steps"][0]["workers_share"] if row["steps"] else 0.0
    # the split steps' tasks run one by one on one thread: the work splitting adds, and their schedule on N
    # free cores (no memory contention, no cache lines crossing cores): what the cut into tasks allows
    # (fastest calls': on a loaded machine the medians of two runs differ by more than what is measured)
    least = sum(s["ms1_least"] for s in row["steps"] if s["tasks"])
    row["split_work"] = sum(sum(s["task_ms"]) for s in row["steps"] if s["tasks"]) / least if least else 1.0
    scheduled = sum(scheduled_ms(s["task_ms"], threads) if s["tasks"] else s["ms1_least"] for s in row["steps"])
    row["scheduled"] = sum(s["ms1_least"] for s in row["steps"]) / scheduled
    if not steps_only:
        row["rounds"] = {key: [round(v, 3) for v in values] for key, values in cells.items()}
    return row


def step_profiles(folder: Path, report: dict, threads: int, rounds: int, repeat: int = 10) -> list[dict]:
    """Per step, medians over the calls: wall ms of NAME_run_v and of NAME_run_parallel on `threads` threads
    (instrumented builds alternating round by round in one process) and, of the latter, its hand-offs and
    tasks, the ms all threads spent in its tasks (work) and the busiest thread's (bench.HostProfiled)."""
    import numpy as np

    from mlcc.bench import HostProfiled, random_feeds
    from mlcc.targets import resolve

    target, feeds, count = resolve(report["target"]), random_feeds(report), max(len(report["steps"]), 1)
    # both on wall time: the N-thread steps can only be timed so (a step spans the threads), and a speedup
    # compares like with like (the one-thread profile's default, the thread's CPU clock, leaves out what
    # another process takes of the core, which the N-thread side pays)
    one, many = (HostProfiled(folder, report, target, feeds, count, clock="wall"),
                 HostProfiled(folder, report, target, feeds, count, threads=threads))
    one.run(2), many.run(2), many.run_serial(2)
    walls1, wallsN, calls, tasks, busy, serial = [], [], [], [], [], []
    for r in range(max(rounds, 2)):
        for k in ((0, 1, 2) if r % 2 == 0 else (2, 1, 0)):
            if k == 0:
                walls1.append(one.run(repeat)[1])
            elif k == 1:
                _, steps_ns, _, c, t, b = many.run_tasks(repeat)
                wallsN.append(steps_ns), calls.append(c), tasks.append(t), busy.append(b)
            else:
                serial.append(many.run_serial(repeat)[3])
    n = len(report["steps"])
    ms = {key: np.median(np.concatenate(v), axis=0)[:n] / 1e6 for key, v in (("ms1", walls1), ("msN", wallsN))}
    # the fastest call's, step by step, for the work and schedule figures: another process's slice only adds
    ms1_least = np.min(np.concatenate(walls1), axis=0)[:n] / 1e6
    task_ms = np.min(np.concatenate(serial), axis=0)[:n] / 1e6
    busy_ns = np.concatenate(busy)[:, :n, :]
    work, busiest = np.median(busy_ns.sum(axis=2), axis=0) / 1e6, np.median(busy_ns.max(axis=2), axis=0) / 1e6
    worker = busy_ns[:, :, 1:].sum() / max(busy_ns.sum(), 1)  # the workers' part of all time in tasks
    calls_, tasks_ = np.median(np.concatenate(calls), axis=0)[:n], np.median(np.concatenate(tasks), axis=0)[:n]
    return [{"step": i, "node": s["node"], "op": s["op"], "parallel": bool(s.get("parallel")),
             "ms1": round(float(ms["ms1"][i]), 4), "msN": round(float(ms["msN"][i]), 4),
             "handoffs": int(calls_[i]), "tasks": int(tasks_[i]), "work": round(float(work[i]), 4),
             "busiest": round(float(busiest[i]), 4), "workers_share": round(float(worker), 3),
             "ms1_least": round(float(ms1_least[i]), 4),
             "task_ms": [round(float(t), 4) for t in task_ms[i, :int(tasks_[i])]]}
            for i, s in enumerate(report["steps"])]


def scheduled_ms(task_ms: list[float], threads: int, start_ms: float = 0.001) -> float:
    """A step's time on `threads` free cores from its tasks' one-thread times, claimed as the pool claims
    them: the caller from the front, workers (starting `start_ms` later, woken) from the back."""
    front, back, free = 0, len(task_ms), [0.0] + [start_ms] * (threads - 1)
    while front < back:
        k = min(range(threads), key=free.__getitem__)
        if k == 0:
            free[k] += task_ms[front]
            front += 1
        else:
            back -= 1
            free[k] += task_ms[back]
    return max(free)


def _lost(s: dict, threads: int) -> tuple[float, float, float]:
    """A step's N-thread time less a perfect split of its one-thread time, in three parts: extra work (its
    tasks' time over the one-thread time, shared by N), imbalance (the busiest thread over an even share
    of the work) and the rest (hand-off, waiting for a thread, the calling thread's own part outside tasks)."""
    if not s["tasks"]:
        return 0.0, 0.0, s["msN"] - s["ms1"] / threads
    extra = (s["work"] - s["ms1"]) / threads
    imbalance = s["busiest"] - s["work"] / threads
    return extra, imbalance, s["msN"] - s["ms1"] / threads - extra - imbalance


def steps_table(row: dict, threads: int) -> str:
    """The steps losing the most against a perfect split, and the sums by whether they split."""
    steps = row["steps"]
    for s in steps:
        s["lost"] = s["msN"] - s["ms1"] / threads
    lines = [f"| step | op | tasks | 1 thread ms | {threads} threads ms | speedup | lost ms | extra work | imbalance "
             "| hand-off, wait |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def line(name: str, op: str, tasks: str, part: list[dict]) -> str:
        one, many = sum(s["ms1"] for s in part), sum(s["msN"] for s in part)
        lost = [sum(_lost(s, threads)[k] for s in part) for k in range(3)]
        speedup = f"{one / many:.2f}x" if many > 0 else "-"
        return (f"| {name} | {op} | {tasks} | {one:.3f} | {many:.3f} | {speedup} | {many - one / threads:+.3f} | "
                + " | ".join(f"{v:+.3f}" for v in lost) + " |")

    for s in sorted(steps, key=lambda s: -s["lost"])[:STEP_ROWS]:
        tasks = f"{s['tasks']}" + (f" in {s['handoffs']}" if s["handoffs"] > 1 else "") if s["tasks"] else "-"
        lines.append(line(s["node"], s["op"], tasks, [s]))
    for split in (True, False):
        part = [s for s in steps if (s["tasks"] > 0) == split]
        if part:
            lines.append(line(f"({len(part)} steps {'split' if split else 'run inline'})", "",
                              str(sum(s["tasks"] for s in part)) if split else "", part))
    return "\n".join(lines)


def table(rows: list[dict], threads: int) -> str:
    lines = [f"| model | mlcc 1 ms | mlcc {threads} ms | mlcc speedup | split share, bound, schedule | ORT 1 ms | ORT {threads} ms "
             f"| ORT speedup | mlcc {threads} / ORT {threads} | wasm 1 ms | wasm {threads} ms | wasm speedup (best runs) "
             "| load before, after |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['error']} | | | | | | | | | | | |")
            continue
        native = ["", "", "", "", "", "", "", ""]
        if "mlcc1" in r:
            speedup, ort_speedup, ratio = r["speedup"], r["ort_speedup"], r["ratio"]
            native = [f"{r['mlcc1']:.2f}", f"{r['mlccN']:.2f}", f"**{speedup:.2f}x**",
                      f"{100 * r['split_share']:.0f}%, {r['bound']:.2f}x, {r['scheduled']:.2f}x",
                      f"{r['ort1']:.2f}", f"{r['ortN']:.2f}",
                      f"{ort_speedup:.2f}x", f"**{ratio:.2f}**"]
        wasm = ["", "", ""]
        if "wasm1" in r:
            wasm = [f"{r['wasm1']:.2f}", f"{r['wasmN']:.2f}",
                    f"**{r['wasm1'] / r['wasmN']:.2f}x** ({r['wasm1_best'] / r['wasmN_best']:.2f}x)"]
        lines.append(f"| {r['model']} | {' | '.join(native + wasm)} | {r['load_before']} / {r['load_after']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--work", type=Path, default=Path(".cache/bench-threads"))
    parser.add_argument("--out", type=Path, default=HERE / "results" / "threads.md")
    parser.add_argument("--no-native", action="store_true", help="only the wasm32-threads build under node")
    parser.add_argument("--no-wasm", action="store_true", help="only the host build and onnxruntime")
    parser.add_argument("--steps-only", action="store_true",
                        help="only the instrumented per-step profiles (printed, no results file written)")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    rows = [run_model(name, args.threads, args.rounds, args.budget, args.work, log, native=not args.no_native,
                      wasm=not args.no_wasm, steps_only=args.steps_only) for name in args.models.split(",")]
    if args.steps_only:
        for r in rows:
            print(f"## {r['model']} (workers' share {100 * r.get('workers_share', 0):.0f}%; split steps' tasks one "
                  f"by one {100 * (r.get('split_work', 1) - 1):+.1f}% work; their schedule {r.get('scheduled', 0):.2f}x)\n\n"
                  f"{r.get('error') or steps_table(r, args.threads)}\n")
        return 0
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model_name = next((line.split(":", 1)[1].strip() for line in cpu.splitlines() if line.startswith("Model name")), "")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    text = "\n".join([
        f"# {args.threads} threads against 1 (python -m benchmarks.threads, at {commit})", "",
        f"{model_name}, {os.cpu_count()} CPUs, {platform.machine()}; mlcc target "
        f"{rows[0].get('target', 'host')}; wall-time medians of {args.rounds} alternating rounds "
        "(ORT 1, mlcc 1, mlcc N, ORT N in each, in that order); the speedups and mlcc N / ORT N are medians of "
        "each round's own ratios, of times measured one right after the other. mlcc N is NAME_run_parallel on the runtime's pthreads pool; "
        f"ORT N is onnxruntime with intra_op_num_threads = {args.threads}. Split share: the part of a one-thread "
        "run (mlcc bench --profile) in steps NAME_run_parallel cuts into tasks; bound: Amdahl's speedup for it "
        f"on {args.threads} free cores; schedule: the speedup the tasks allow, each step's tasks timed one by one "
        "on one thread (fastest calls) and scheduled as the pool claims them on free cores (what is left is "
        f"memory: contention and cache lines crossing cores). wasm 1, wasm N: a wasm32-threads build under node {_node_version()}, "
        "NAME.mjs loaded with threads 1 (NAME_run_v) and N (its pool of worker_threads), alternating run by run "
        "in one process, wall-time medians of the rounds' medians; in brackets the speedup of the fastest "
        "runs, nearer an idle machine's when other jobs hold the cores.", "",
        table(rows, args.threads), "",
        "Per step (instrumented builds, mlcc bench --profile, alternating in one process; medians over the "
        "calls): wall ms on 1 and N threads, tasks (and hand-offs when a step makes more than one), and the N-thread "
        "time lost against a perfect split (N-thread ms less 1-thread ms / N) in three parts from each thread's "
        "time inside tasks: extra work (the tasks' time over the 1-thread time, shared by N: memory "
        "bandwidth, cold caches, work repeated per task), imbalance (the busiest thread over an even share) and "
        "hand-off, wait (the rest: publishing and waking, waiting for a thread that had no core). Workers' share: "
        "the part of all time in tasks the pool's workers ran (1 - 1/N when every thread found a core).", "",
        *[f"## {r['model']}: per step, 1 and {args.threads} threads (workers' share "
          f"{100 * r['workers_share']:.0f}%; split steps' tasks one by one {100 * (r['split_work'] - 1):+.1f}% "
          f"work)\n\n{steps_table(r, args.threads)}\n" for r in rows if "steps" in r],
        *(["Load averages above the machine's CPUs: other jobs held the cores, so a second thread found one only "
           "part of the time and each timed column swung with their load between rounds. The speedups above are "
           "the load's; the bound column (from the split steps' share) is what the code allows.", ""]
          if any(float(r.get(k, "0").split()[0]) > (os.cpu_count() or 1) for r in rows
                 for k in ("load_before", "load_after")) else []),
    ])
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
