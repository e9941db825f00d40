"""python -m benchmarks: build the model suite, then measure in one run mlcc natively vs onnxruntime (one
thread) and mlcc wasm32 in wasmtime vs onnxruntime-web under node (one thread, SIMD), with this core's
measured fp32 peak. Natively, every SIMD level the machine runs is built and timed side by side (on an
AVX-512 x86 machine x86_64-avx512 and x86_64, its AVX2 level). Prints a markdown table and writes it, with
every figure, to benchmarks/results/.

    python -m benchmarks                      # the whole suite (tens of minutes)
    python -m benchmarks --quick              # the small models, short budgets
    python -m benchmarks --models resnet8,mlp --no-web
    python -m benchmarks --levels x86_64 --no-wasm  # the AVX2 level alone
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import onnx

from benchmarks import measure, table
from benchmarks.models import QUICK, SUITE

HERE = Path(__file__).resolve().parent


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help=f"comma-separated subset of: {', '.join(SUITE)}")
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, with short budgets")
    p.add_argument("--budget", type=float, help="seconds of timed runs per measurement [8, quick 2]")
    p.add_argument("--rounds", type=int, default=3,
                   help="alternating rounds the budget is split into; medians are the rounds' median [3]")
    p.add_argument("--max-repeat", type=int, default=50, help="timed runs per measurement at most [50]")
    p.add_argument("--levels", help="comma-separated native targets to time [every SIMD level this machine "
                                    "runs: " + ", ".join(measure.native_levels()) + "]")
    p.add_argument("--no-wasm", action="store_true", help="skip mlcc wasm32 and onnxruntime-web")
    p.add_argument("--no-web", action="store_true", help="skip onnxruntime-web")
    p.add_argument("--work", type=Path, default=HERE / "work", help="models and builds go here [benchmarks/work]")
    p.add_argument("--out", type=Path, help="results without extension [benchmarks/results/latest, or "
                                            "benchmarks/results/partial for a subset]")
    args = p.parse_args(argv)
    names = list(SUITE)
    if args.models:
        wanted = [m.strip() for m in args.models.split(",") if m.strip()]
        unknown = [m for m in wanted if m not in names]
        if unknown:
            p.error(f"unknown model(s) {', '.join(unknown)}; models are: {', '.join(names)}")
        names = wanted
    elif args.quick:
        names = list(QUICK)
    args.names = names
    levels = measure.native_levels()
    args.levels = [t.strip() for t in args.levels.split(",") if t.strip()] if args.levels else levels
    if not args.levels or not set(args.levels) <= set(levels):
        p.error(f"--levels: this machine runs {', '.join(levels) or 'no SIMD level'}")
    args.budget = args.budget or (2.0 if args.quick else 8.0)
    full = not args.models and not args.quick and args.levels == levels
    args.out = args.out or HERE / "results" / ("latest" if full else "partial")
    return args


def install_web() -> str | None:
    """npm ci into benchmarks/web when onnxruntime-web is missing; None when ready, else why not."""
    if measure.web_available() is None:
        return None
    if shutil.which("npm") is None:
        return "npm is not installed"
    proc = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=measure.WEB, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        return f"npm ci failed (registry unreachable?): {lines[-1] if lines else ''}"
    return measure.web_available()


def environment(web_note: str | None) -> dict:
    import importlib.metadata

    import onnxruntime

    from mlcc import __version__
    from mlcc.targets import resolve

    def text(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=HERE).stdout.strip()
        except OSError:
            return ""

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"), "cpu": cpu, "cores": os.cpu_count(),
        "load_average": os.getloadavg(), "mlcc": __version__,
        "commit": text(["git", "rev-parse", "--short", "HEAD"])
        + ("+dirty" if text(["git", "status", "--porcelain", "--", "../mlcc", "../runtime_c"]) else ""),
        "host_target": resolve("host").name, "onnxruntime": onnxruntime.__version__,
        "wasmtime": importlib.metadata.version("wasmtime"), "node": text(["node", "--version"]),
        "web_note": web_note, "python": platform.python_version(),
    }


def run_model(name: str, args, log) -> dict:
    from mlcc.cli import random_inputs

    row: dict = {"model": name}
    models_dir, builds = args.work / "models", args.work / "build"
    models_dir.mkdir(parents=True, exist_ok=True)
    try:
        model = SUITE[name]()
    except Exception as exc:  # noqa: BLE001
        return {**row, "error": measure.failure(exc)["error"]}
    path = models_dir / f"{name}.onnx"
    onnx.save(model, str(path))
    specs = measure.input_specs(model)
    del model  # VGG-19 is half a gigabyte: the builds load it again, one at a time
    feeds = random_inputs(specs, seed=0)
    row["native"] = {level: {"build": measure.mlcc_build(path, level, builds / f"{name}-{level}")}
                     for level in args.levels}
    row["flops"] = next((n["build"]["flops"] for n in row["native"].values() if "flops" in n["build"]), None)
    if not args.no_wasm:
        row["wasm_build"] = measure.mlcc_build(path, "wasm32", builds / f"{name}-wasm32")
        row["flops"] = row["flops"] or row["wasm_build"].get("flops")
    # Each pair is timed in alternating rounds, so a slow spell of this shared VM falls on both sides of a ratio
    rounds = {"ort": [], "wasm": [], "web": [], **{level: [] for level in args.levels}}
    budget, most = args.budget / args.rounds, max(3, args.max_repeat // args.rounds)
    expected = None
    # the FMA peak of the level's ISA right before and after each of its rounds: what the core gave while it ran
    peaks: dict[str, list] = {level: [] for level in args.levels}
    for r in range(args.rounds):
        log(f"{name}: round {r + 1} of {args.rounds}: onnxruntime, mlcc {', '.join(args.levels)}")
        timing, outputs = measure.ort_latency(path, feeds, budget, most)
        rounds["ort"].append(timing)
        expected = expected if outputs is None else outputs
        for level in args.levels:
            isa = measure.level_isa(level)
            peaks[level].append(measure.paired_peak(args.work, isa))
            rounds[level].append(measure.mlcc_latency(row["native"][level]["build"], feeds, expected, budget, most))
            peaks[level].append(measure.paired_peak(args.work, isa))
        if not args.no_wasm:
            log(f"{name}: round {r + 1} of {args.rounds}: mlcc wasm32" + ("" if args.no_web else ", onnxruntime-web"))
            rounds["wasm"].append(measure.mlcc_latency(row["wasm_build"], feeds, expected, budget, most))
            if not args.no_web:
                estimate = next((rounds[k][-1]["median_ms"] / 1e3 for k in ("wasm", "ort")
                                 if "median_ms" in rounds[k][-1]), 1.0)
                rounds["web"].append(measure.web_latency(path, specs, estimate, budget, most))
    for key, results in rounds.items():
        if results and key in row["native"]:
            row["native"][key]["mlcc"] = measure.merge_rounds(results)
        elif results:
            row[key] = measure.merge_rounds(results)
    for level, values in peaks.items():
        values = [p for p in values if p]
        if values:
            row["native"][level]["paired_peak_gflops"] = float(statistics.median(values))
    return row


def write(results: dict, out: Path) -> str:
    text = table.markdown(results)
    out.with_suffix(".md").write_text(text)
    out.with_suffix(".json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    return text


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    args.work.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    web_note = None if args.no_wasm or args.no_web else install_web()
    if web_note:
        log(f"onnxruntime-web skipped: {web_note}")
    env = environment("skipped" if args.no_web or args.no_wasm else web_note)
    log("measuring this core's fp32 peak")
    peak = measure.peak_gflops(args.work)
    results = {"environment": env, "peak_gflops": peak, "budget_s": args.budget, "rounds": args.rounds,
               "levels": {level: measure.level_isa(level) for level in args.levels},
               "paired_peak_runs": measure.PAIRED_PEAK_RUNS, "rows": []}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.names:
        results["rows"].append(run_model(name, args, log))
        log(f"{name}: {table.row_summary(results['rows'][-1])}")
        env["load_average_end"] = os.getloadavg()
        text = write(results, args.out)  # after every model: a run cut short keeps what it measured
    print(text)
    log(f"wrote {args.out.with_suffix('.md')} and .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
