"""`mlcc tune`: time the candidate implementations of each distinct layer of a model on the target's runner and
write a tuning file (mlcc/tuning.py) that `mlcc build --tuning FILE` uses.

A layer's candidates are the algorithms its op offers (`Op.algorithms`: im2col + GEMM, Winograd, direct) times
the f32-gemm tiles of the target's best ISA (for the algorithms that run a GEMM); a product with no
algorithm to choose (Gemm, MatMul) has the tiles only. The default (what the heuristics pick) comes first.
Rather than a model per layer, the whole model is built once per candidate rank: build i gives every
distinct layer its i-th candidate (its default where it has fewer), so a model needs as many builds as its
most varied layer has candidates (4 for ResNet-50 on AVX-512), and every layer is timed where it runs, with
the caches the model leaves it. Each build is relinked with the per-step profiler (mlcc bench --profile) and
all stay loaded in one process; rounds alternate between them, so load on a shared machine falls on all
alike. Steps are timed on the thread's CPU clock (bench.step_clock: one thread on the host), which the
neighbours' load barely changes. A layer's time is the sum over its steps of each step's median; a candidate replaces the default
only when it is faster by more than `margin` and faster in more than two thirds of the rounds (noise).
Last, the tuned build is timed against the default, alternating, whole-model medians of the thread's CPU
time (steadier than wall time on a shared machine).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import ops, tuning
from .bench import CLOCKS, HostProfiled, random_feeds
from .errors import UsageError
from .ops import _gemm
from .pipeline import BuildOptions, build, compile_model
from .targets import optimized_for, resolve

NOISE = 0.01  # a whole-model ratio closer to 1 than this says nothing on a shared machine
AB_ROUNDS = 2  # the closing tuned-against-default comparison takes this many times --rounds
RUNNERS = ("host",)  # the runners whose per-step profiler tune drives in one process (bench.HostProfiled)


@dataclass
class Layer:
    """One distinct layer signature: its steps (by node name), candidates (default first) and times."""
    signature: str
    op: str
    steps: list[str]
    candidates: list[dict]
    ms: list[float] = field(default_factory=list)  # per candidate: summed step medians
    best: int = 0


def _effective(step) -> dict:
    """What the default build ran for a step: its algorithm (the node's mark) and its GEMM tile."""
    chosen = {}
    if step.node.attrs.get("algorithm") in tuning.ALGORITHMS:
        chosen["algorithm"] = step.node.attrs["algorithm"]
    tiles = [k.function[len(_gemm.CONFIG_PREFIX):] for k in step.kernels if k.function.startswith(_gemm.CONFIG_PREFIX)]
    if tiles:
        chosen["tile"] = tiles[0]
    return chosen


def candidate_tiles(target) -> list[str]:
    """The f32-gemm tiles of the ISA the heuristics pick first on this target (an AVX-512 target's AVX2 tiles
    win only where they pad n less, and tile_for already picks them there: a layer's default is a candidate)."""
    isa = _gemm.tile_for(target).isa
    return [t.name for t in _gemm.runnable(target) if t.isa == isa]


def layers(compiled) -> list[Layer]:
    """The model's tunable layers, one per distinct signature, in order of first step."""
    target, tiles = compiled.target, candidate_tiles(compiled.target)
    found: dict[str, Layer] = {}
    for step in compiled.program.steps:
        op = ops.of(step.node)
        default = _effective(step)
        algorithms = op.algorithms(step.node, target) if op is not None else ()
        if not algorithms and "tile" not in default:
            continue
        sig = tuning.signature(step.node)
        if sig in found:
            found[sig].steps.append(step.node.name)
            continue
        options = []
        for algorithm in algorithms or (None,):
            runs_gemm = algorithm != "direct"
            for tile in tiles if runs_gemm else (None,):
                choice = {k: v for k, v in (("algorithm", algorithm), ("tile", tile)) if v is not None}
                if choice != default:
                    options.append(choice)
        if options:
            found[sig] = Layer(sig, step.node.op_type, [step.node.name], [default, *options])
    return list(found.values())


def _entries(layers_: list[Layer], rank: int, target: str, cpu: str) -> list[tuning.Entry]:
    return [tuning.Entry(target, cpu, layer.signature, layer.candidates[rank])
            for layer in layers_ if rank < len(layer.candidates) and rank > 0]


def _profiled(model: Path, options: BuildOptions, entries: list[tuning.Entry], work: Path, label: str, seed: int):
    """Build the model with these entries as its tuning file and load it with the profiling hooks."""
    file = work / f"{label}.tuning.json"
    tuning.write(file, entries)
    folder, report = build(model, replace(options, out_dir=work / label, compile=False, tuning=file))
    target = resolve(report["target"])
    return HostProfiled(folder, report, target, random_feeds(report, seed), max(len(report["steps"]), 1),
                        cached_kernels=True), report


def tune(model: str | Path, options: BuildOptions, out: Path | None = None, rounds: int = 7, repeat: int = 5,
         margin: float = 0.03, seed: int = 0, log=lambda line: None) -> dict:
    """Tune `model` for options.target on this machine; write the tuning file `out` (merged with what it
    held for other targets, CPUs or layers) and return what was measured."""
    if rounds < 1 or repeat < 1:
        raise UsageError("--rounds and --repeat must be 1 or more")
    if not 0 <= margin < 1:
        raise UsageError(f"--margin {margin}: must be at least 0 and below 1")
    model = Path(model)
    started = time.perf_counter()
    target = optimized_for(resolve(options.target), options.optimize_for)
    if target.runner not in RUNNERS:
        raise UsageError(f"mlcc tune times on the runners {', '.join(RUNNERS)}; target {target.name!r} runs on "
                         f"{target.runner!r}")
    keep = tuning.read_entries(out) if out is not None and out.exists() else []
    cpu = tuning.cpu_model()
    options = replace(options, target=target.name, tuning=None, progress=lambda stage: None)
    log(f"tuning {model.name} for {target.name} on {cpu}")
    compiled = compile_model(model, replace(options, compile=False))
    found = layers(compiled)
    builds = max((len(layer.candidates) for layer in found), default=1)
    log(f"  {len(found)} distinct layers with a choice, {sum(len(x.candidates) for x in found)} candidates: "
        f"{builds} builds")
    with tempfile.TemporaryDirectory(prefix="mlcc-tune-") as tmp:
        work = Path(tmp)
        profiled, reports = [], []
        for rank in range(builds):
            p, report = _profiled(model, options, _entries(found, rank, target.name, cpu), work, f"rank{rank}", seed)
            profiled.append(p)
            reports.append(report)
            log(f"  built candidate rank {rank} ({time.perf_counter() - started:.0f} s)")
        samples = [[] for _ in profiled]
        for p in profiled:
            p.run(1)  # warm up
        for _ in range(rounds):  # alternate: each round times every build in turn
            for i, p in enumerate(profiled):
                p.run(1)  # untimed: the build before it left the caches holding its own weights
                samples[i].append(p.run(repeat)[1])
        for layer in found:
            by_round = []  # per candidate: the layer's time in each round
            for rank in range(len(layer.candidates)):
                mine = np.array([s["node"] in layer.steps for s in reports[rank]["steps"]]
                                + [False] * (samples[rank][0].shape[1] - len(reports[rank]["steps"])))
                per_step = np.median(np.concatenate(samples[rank]), axis=0) / 1e6
                layer.ms.append(float(per_step[mine].sum()))
                by_round.append([float(np.median(r, axis=0)[mine].sum()) for r in samples[rank]])
            fastest = min(range(len(layer.ms)), key=layer.ms.__getitem__)
            wins = sum(a < b for a, b in zip(by_round[fastest], by_round[0]))
            # faster by the margin over all runs, and in more than two thirds of the rounds: not one lucky round
            if layer.ms[fastest] < layer.ms[0] * (1 - margin) and 3 * wins > 2 * rounds:
                layer.best = fastest
        entries = [tuning.Entry(target.name, cpu, layer.signature, layer.candidates[layer.best],
                                {"default": layer.candidates[0], "default_ms": round(layer.ms[0], 4),
                                 "tuned_ms": round(layer.ms[layer.best], 4), "steps": len(layer.steps)})
                   for layer in found if layer.best]
        tuned_ms = default_ms = []
        if entries:  # the tuned build against the default, alternating
            tuned, _ = _profiled(model, options, entries, work, "tuned", seed)
            default_ms, tuned_ms = [], []
            for _ in range(AB_ROUNDS * rounds):  # thread CPU time: what other load changes least
                for runs, p in ((default_ms, profiled[0]), (tuned_ms, tuned)):
                    p.run(1)
                    runs.extend(p.run(repeat)[2] / 1e6)
    if out is not None:
        tuning.write(out, entries, keep)
    seconds = time.perf_counter() - started
    result = {"model": str(model), "target": target.name, "cpu": cpu, "seconds": round(seconds, 1),
              "builds": builds, "layers": len(found), "tuned_layers": len(entries), "rounds": rounds, "repeat": repeat,
              "margin": margin, "clock": profiled[0].clock,
              "file": str(out) if out is not None else None,
              "default_ms": statistics.median(default_ms) if default_ms else None,
              "tuned_ms": statistics.median(tuned_ms) if tuned_ms else None,
              "rows": [{"signature": x.signature, "steps": len(x.steps), "candidates": x.candidates, "ms": x.ms,
                        "best": x.best} for x in found]}
    if default_ms and tuned_ms:
        result["speedup"] = result["default_ms"] / result["tuned_ms"]
    return result


def summary(result: dict) -> list[str]:
    lines = []
    for row in result["rows"]:
        if row["best"]:
            before, after = row["ms"][0], row["ms"][row["best"]]
            lines.append(f"  {before:8.3f} -> {after:8.3f} ms  x{row['steps']}  {_choice(row['candidates'][0])} -> "
                         f"{_choice(row['candidates'][row['best']])}  {row['signature']}")
    lines.append(f"{result['tuned_layers']} of {result['layers']} layers tuned in {result['seconds']:.0f} s "
                 f"({result['builds']} builds, {result['rounds']} rounds x {result['repeat']} runs, margin "
                 f"{result['margin']:.0%}) for {result['target']} on {result['cpu']}"
                 + (f"; layers timed on {CLOCKS[result['clock']]}" if result.get("clock") else ""))
    if "speedup" in result:
        verdict = "" if result["speedup"] > 1 + NOISE else f" (within {NOISE:.0%}: no faster than the default here)"
        lines.append(f"whole model, thread CPU time (profiled builds, alternating, medians of "
                     f"{AB_ROUNDS * result['rounds'] * result['repeat']}): "
                     f"default {result['default_ms']:.3f} ms, tuned {result['tuned_ms']:.3f} ms: "
                     f"{result['speedup']:.3f}x{verdict}")
    if result["file"]:
        lines.append(f"wrote {result['file']}: use it with `mlcc build --tuning {result['file']}`")
    return lines


def _choice(choice: dict) -> str:
    return "/".join(choice.values()) or "-"
