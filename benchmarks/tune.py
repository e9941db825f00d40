"""python -m benchmarks.tune: `mlcc tune` on the suite's ResNet-50 and MobileNetV2 (benchmarks/models.py, seeded
random weights), the time it takes, and the tuned build against the default as `mlcc build` makes them:
ordinary builds (no profiling hooks), timed by mlcc bench's host harness, alternating default and tuned round
by round in one process, medians of the thread's CPU time (and wall time). Results go to
benchmarks/results/tune.{json,md}.

    python -m benchmarks.tune                       # both models, host
    python -m benchmarks.tune --models mobilenet_v2 --rounds 9 --repeat 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import onnx

from benchmarks.models import SUITE
from mlcc import bench, tuning
from mlcc.pipeline import BuildOptions, build
from mlcc.targets import resolve
from mlcc.tune import summary, tune

RESULTS = Path(__file__).parent / "results"


def measure(name: str, target: str, work: Path, rounds: int, repeat: int) -> dict:
    model = work / f"{name}.onnx"
    onnx.save(SUITE[name](), str(model))
    file = work / f"{name}.tuning.json"
    started = time.perf_counter()
    result = tune(model, BuildOptions(target=target), file)
    tune_seconds = time.perf_counter() - started
    print("\n".join(summary(result)), flush=True)
    folders = {}
    for label, tuning_file in (("default", None), ("tuned", file)):
        folders[label], _ = build(model, BuildOptions(target=target, out_dir=work / f"{name}-{label}", tuning=tuning_file))
    cpu = {label: [] for label in folders}
    wall = {label: [] for label in folders}
    for _ in range(rounds):
        for label, folder in folders.items():
            b = bench.bench(folder, warmup=2, repeat=repeat)
            cpu[label].extend(b["cpu_times_ms"])
            wall[label].extend(b["times_ms"])
    row = {"model": name, "target": result["target"], "cpu": result["cpu"], "tune_seconds": round(tune_seconds, 1),
           "builds": result["builds"], "layers": result["layers"], "tuned_layers": result["tuned_layers"],
           "rounds": rounds, "repeat": repeat, "entries": [e.to_json() for e in tuning.read_entries(file)]}
    for label in folders:
        row[f"{label}_cpu_ms"] = statistics.median(cpu[label])
        row[f"{label}_wall_ms"] = statistics.median(wall[label])
    row["speedup_cpu"] = row["default_cpu_ms"] / row["tuned_cpu_ms"]
    row["speedup_wall"] = row["default_wall_ms"] / row["tuned_wall_ms"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet50,mobilenet_v2")
    parser.add_argument("-t", "--target", default="host")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-bench-tune-") as tmp:
        for name in args.models.split(","):
            rows.append(measure(name, args.target, Path(tmp), args.rounds, args.repeat))
    target = resolve(args.target)
    lines = [f"# mlcc tune: time spent and tuned vs default ({rows[0]['cpu']}, target {target.name}, features "
             f"{', '.join(target.features)})", "",
             f"Ordinary builds timed by mlcc bench's host harness, default and tuned alternating in one process, "
             f"{args.rounds} rounds x {args.repeat} runs, medians; a shared 2-core machine under other load, so "
             "CPU time is the figure to read. mlcc tune chose the layers on per-step thread CPU time.", "",
             "| model | tune time | builds | layers tuned | default CPU ms | tuned CPU ms | speedup (CPU) | speedup (wall) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['tune_seconds']:.0f} s | {r['builds']} | {r['tuned_layers']} of {r['layers']} | "
                     f"{r['default_cpu_ms']:.2f} | {r['tuned_cpu_ms']:.2f} | {r['speedup_cpu']:.3f}x | {r['speedup_wall']:.3f}x |")
    if any(r["tuned_layers"] == 0 for r in rows):
        lines += ["", "A model with no layer tuned builds the default twice: its speedup is this comparison's noise."]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tune.json").write_text(json.dumps(rows, indent=1) + "\n")
    (args.out / "tune.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
