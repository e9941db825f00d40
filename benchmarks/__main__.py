"""python -m benchmarks: build the model suite, then measure in one run mlcc natively vs onnxruntime (one
thread) and mlcc wasm32 in wasmtime, and the same module in V8 through its ES module, vs onnxruntime-web
under node (one thread, SIMD), with this core's measured fp32 peak. Natively, every SIMD level the machine runs is built and timed side by side (on an
AVX-512 x86 machine x86_64-avx512 and x86_64, its AVX2 level). Prints a markdown table and writes it, with
every figure, to benchmarks/results/.

    python -m benchmarks                      # the whole suite (tens of minutes)
    python -m benchmarks --quick              # the small models, short budgets
    python -m benchmarks --models resnet8,mlp --no-web
    python -m benchmarks --levels x86_64 --no-wasm  # the AVX2 level alone
    python -m benchmarks --int8-only --models resnet8,bert_encoder  # the int8 rows alone

int8 rows: each conv net and MLPerf Tiny model quantized by onnxruntime.quantization (QDQ static, per-channel
int8 weights, uint8 activations; benchmarks/int8.py) and the BERT encoder dynamically, then mlcc int8 on the best
native level, onnxruntime int8 (one thread, all optimisations) and mlcc fp32 in alternating rounds, mlcc wasm32
int8 against onnxruntime-web int8, and arena and weights bytes of the int8 build against the fp32 one.
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

from benchmarks import int8, measure, table
from benchmarks.models import QUICK, SUITE
from mlcc import runners
from mlcc.targets import host_target

HERE = Path(__file__).resolve().parent
# Native timing interleaves onnxruntime and the levels in turns of about TURN_S seconds of runs (at most
# TURN_RUNS; one run where a run is longer), so a slow spell of the VM (it swings 1.3x over seconds) falls on
# every side alike; at most HOST_MAX_RUNS runs a side (µs models), BLOCKS stretches for the spread
TURN_S, TURN_RUNS, HOST_MAX_RUNS, BLOCKS = 0.005, 20, 3000, 5


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help=f"comma-separated subset of: {', '.join(SUITE)}")
    p.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}, with short budgets")
    p.add_argument("--budget", type=float, help="seconds of timed runs per measurement [8, quick 2]")
    p.add_argument("--rounds", type=int, default=3,
                   help="wasm32, web and int8: alternating rounds the budget is split into; medians are the "
                        "rounds' median [3]")
    p.add_argument("--max-repeat", type=int, default=50,
                   help=f"timed runs per measurement at most [50]; natively {HOST_MAX_RUNS}, interleaved")
    p.add_argument("--levels", help="comma-separated native targets to time [every SIMD level this machine "
                                    "runs: " + ", ".join(measure.native_levels()) + "]")
    p.add_argument("--no-wasm", action="store_true", help="skip mlcc wasm32 and onnxruntime-web")
    p.add_argument("--no-web", action="store_true", help="skip onnxruntime-web")
    p.add_argument("--no-int8", action="store_true", help="skip the int8 rows")
    p.add_argument("--int8-only", action="store_true", help="only the int8 rows (each still times mlcc fp32)")
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
    if args.no_int8 and args.int8_only:
        p.error("--no-int8 and --int8-only leave nothing to measure")
    full = not args.models and not args.quick and args.levels == levels and not args.int8_only
    args.out = args.out or HERE / "results" / ("latest" if full else "partial")
    return args


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
    if args.int8_only:  # the fp32 builds the int8 row compares with
        row["native"] = {}
        if not args.no_wasm:
            row["wasm_build"] = measure.mlcc_build(path, "wasm32", builds / f"{name}-wasm32")
        row["int8"] = run_int8(name, path, specs, feeds, row, args, log)
        return row
    row["native"] = {level: {"build": measure.mlcc_build(path, level, builds / f"{name}-{level}")}
                     for level in args.levels}
    row["flops"] = next((n["build"]["flops"] for n in row["native"].values() if "flops" in n["build"]), None)
    if not args.no_wasm:
        row["wasm_build"] = measure.mlcc_build(path, "wasm32", builds / f"{name}-wasm32")
        row["flops"] = row["flops"] or row["wasm_build"].get("flops")
    expected = time_host(name, path, feeds, row, args, log)
    # Each pair is timed in alternating rounds, so a slow spell of this shared VM falls on both sides of a ratio
    rounds = {"wasm": [], "v8": [], "web": []}
    budget, most = args.budget / args.rounds, max(3, args.max_repeat // args.rounds)
    for r in range(0 if args.no_wasm else args.rounds):
        log(f"{name}: round {r + 1} of {args.rounds}: mlcc wasm32" + ("" if args.no_web else ", onnxruntime-web"))
        rounds["wasm"].append(measure.mlcc_latency(row["wasm_build"], feeds, expected, budget, most))
        if not args.no_web:
            estimate = next((cell["median_ms"] / 1e3 for cell in (rounds["wasm"][-1], row.get("ort") or {})
                             if "median_ms" in cell), 1.0)
            # the same module in V8 too: onnxruntime-web's engine, where wasmtime is mlcc's runner
            rounds["v8"].append(measure.v8_latency(row["wasm_build"], estimate, budget, most))
            rounds["web"].append(measure.web_latency(path, specs, estimate, budget, most))
    for key, results in rounds.items():
        if results:
            row[key] = measure.merge_rounds(results)
    if not args.no_int8:
        row["int8"] = run_int8(name, path, specs, feeds, row, args, log)
    return row


def time_host(name: str, path: Path, feeds: dict, row: dict, args, log) -> dict | None:
    """onnxruntime (one thread) and mlcc at each native level, each loaded once, then timed interleaved: short
    turns in rotation (each a few milliseconds of runs, one run for a model slower than that, after one untimed
    run that puts the side's weights back in the caches), until each side has had args.budget seconds or
    HOST_MAX_RUNS runs. Every side is sampled over the same seconds, so a slow spell of this shared VM falls on
    all of them alike; a ratio is of the sides' medians of the thread's CPU time (what the neighbours' load
    changes least; wall time kept beside it). Fills row["ort"] and each level's "mlcc" cell; returns
    onnxruntime's outputs."""
    try:
        ort = measure.OrtTimed(path, feeds)
    except Exception as exc:  # noqa: BLE001 - the row says why
        row["ort"] = measure.failure(exc)
        ort = None
    expected = ort.outputs if ort is not None else None
    timers: dict[str, object] = {"ort": ort} if ort is not None else {}
    for level in args.levels:
        built = row["native"][level]["build"]
        if "error" in built:
            row["native"][level]["mlcc"] = {"error": f"build failed: {built['error'][:200]}"}
            continue
        try:
            timers[level] = measure.MlccTimed(built, feeds, expected)
        except Exception as exc:  # noqa: BLE001
            row["native"][level]["mlcc"] = measure.failure(exc)
    log(f"{name}: interleaved turns: {', '.join(timers)}")
    # the FMA peak of a level's ISA right before and after the interleaved runs: what the core gave meanwhile
    peaks = {level: [measure.paired_peak(args.work, measure.level_isa(level))] for level in timers if level != "ort"}
    samples: dict[str, list] = {key: [] for key in timers}
    failed: dict[str, dict] = {}
    spent = {key: 0.0 for key in timers}
    estimate = {key: timer.first_s for key, timer in timers.items()}
    try:
        turn = 0
        while True:
            active = [key for key in timers if key not in failed and spent[key] < args.budget
                      and len(samples[key]) < HOST_MAX_RUNS]
            if not active:
                break
            for key in active if turn % 2 == 0 else reversed(active):
                runs = max(1, min(TURN_RUNS, int(TURN_S / max(estimate[key], 1e-6))))
                try:
                    wall, cpu = timers[key].run(1 if estimate[key] < TURN_S else 0, runs)
                except Exception as exc:  # noqa: BLE001
                    failed[key] = measure.failure(exc)
                    continue
                samples[key].extend(zip(wall, cpu))
                spent[key] += float(wall.sum()) / 1e3
                estimate[key] = float(statistics.median(wall)) / 1e3
            turn += 1
    finally:
        for key, timer in timers.items():
            if key != "ort":
                timer.close()
    for level in peaks:
        peaks[level].append(measure.paired_peak(args.work, measure.level_isa(level)))
    cells = {key: failed.get(key) or measure.interleaved_summary(samples[key]) for key in timers}
    if "ort" in cells:
        row["ort"] = cells["ort"]
    for level in args.levels:
        if level not in cells:
            continue
        cell = {**cells[level], **timers[level].check}
        ort_cell = cells.get("ort") or {}
        if "error" not in cell and "cpu_median_ms" in ort_cell:
            cell["cpu_ratio"] = cell["cpu_median_ms"] / ort_cell["cpu_median_ms"]
            # the same ratio in each of BLOCKS consecutive stretches of the run: how much it moved meanwhile
            cell["block_cpu_ratios"] = measure.block_ratios(samples[level], samples["ort"], BLOCKS)
        row["native"][level]["mlcc"] = cell
        values = [p for p in peaks.get(level, []) if p]
        if values:
            row["native"][level]["paired_peak_gflops"] = float(statistics.median(values))
    return expected


def run_int8(name: str, path: Path, specs: list[dict], feeds: dict, row: dict, args, log) -> dict | None:
    """The model's int8 row (None for a model without one): mlcc int8 on the first native level, onnxruntime
    int8 and mlcc fp32 (the row's build) in alternating rounds; mlcc wasm32 int8 and onnxruntime-web int8 the
    same; bytes of both builds; the int8 outputs' largest difference from the exact integer semantics."""
    scheme = int8.scheme(name)
    if scheme is None:
        return None
    # the host target: the best this CPU runs, for int8 its dot products (VNNI) where the fp32 levels stop at AVX-512
    level, builds = host_target().name, args.work / "build"
    result: dict = {"scheme": scheme, "level": level}
    q_path = path.with_name(f"{name}.int8.onnx")
    try:
        int8.quantize_for_suite(name, onnx.load(str(path)), path.with_name(f"{name}.fp32-copy.onnx"), q_path)
    except Exception as exc:  # noqa: BLE001 - the row says why
        return {**result, "error": measure.failure(exc)["error"]}
    result["native_build"] = measure.mlcc_build(q_path, level, builds / f"{name}-int8-{level}")
    if not args.no_wasm:
        result["wasm_build"] = measure.mlcc_build(q_path, "wasm32", builds / f"{name}-int8-wasm32")
    fp32_build = (row["native"].get(level) or {}).get("build") or measure.mlcc_build(path, level, builds / f"{name}-{level}")
    try:  # one step of the last output is the tests' bound (tests/quantized); here it is reported
        exact = int8.exact_outputs(q_path, feeds)
        got = runners.load(result["native_build"]["folder"]).run(feeds) if "folder" in result["native_build"] else {}
        result["max_abs_err_vs_exact"] = max((float(abs(got[k].astype("float64") - exact[k]).max()) for k in got
                                              if k in exact), default=None)
    except Exception as exc:  # noqa: BLE001
        result["exact_error"] = measure.failure(exc)["error"]
    rounds: dict[str, list] = {"mlcc": [], "ort": [], "fp32": [], "wasm": [], "wasm_fp32": [], "web": []}
    budget, most = args.budget / args.rounds, max(3, args.max_repeat // args.rounds)
    for r in range(args.rounds):
        log(f"{name} int8: round {r + 1} of {args.rounds}")
        rounds["mlcc"].append(measure.mlcc_latency(result["native_build"], feeds, None, budget, most))
        rounds["ort"].append(measure.ort_latency(q_path, feeds, budget, most)[0])
        rounds["fp32"].append(measure.mlcc_latency(fp32_build, feeds, None, budget, most))
        if not args.no_wasm:
            rounds["wasm"].append(measure.mlcc_latency(result["wasm_build"], feeds, None, budget, most))
            rounds["wasm_fp32"].append(measure.mlcc_latency(row["wasm_build"], feeds, None, budget, most))
            if not args.no_web:
                estimate = rounds["wasm"][-1].get("median_ms", 1000.0) / 1e3
                rounds["web"].append(measure.web_latency(q_path, specs, estimate, budget, most))
    result.update({key: measure.merge_rounds(values) for key, values in rounds.items() if values})
    result["bytes"] = {label: {"arena": b.get("arena_bytes"), "weights": b.get("weights_bytes")}
                       for label, b in (("int8", result["native_build"]), ("fp32", fp32_build),
                                        ("wasm_int8", result.get("wasm_build") or {}),
                                        ("wasm_fp32", row.get("wasm_build") or {}))}
    return result


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

    web_note = None if args.no_wasm or args.no_web else measure.install_web()
    if web_note:
        log(f"onnxruntime-web skipped: {web_note}")
    env = environment("--no-wasm" if args.no_wasm else "--no-web" if args.no_web else web_note)
    log("measuring this core's fp32 peak")
    peak = measure.peak_gflops(args.work)
    results = {"environment": env, "peak_gflops": peak, "budget_s": args.budget, "rounds": args.rounds,
               "host_timing": {"turn_s": TURN_S, "turn_runs": TURN_RUNS, "max_runs": HOST_MAX_RUNS,
                               "blocks": BLOCKS},
               "levels": {level: measure.level_isa(level) for level in args.levels},
               "paired_peak_runs": measure.PAIRED_PEAK_RUNS, "int8_only": args.int8_only, "rows": []}
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
