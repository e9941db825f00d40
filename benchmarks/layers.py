"""python -m benchmarks.layers: where mlcc on the host and onnxruntime (one thread) spend a model's time, layer
by layer, side by side: mlcc's per-step profile (mlcc bench --profile) against onnxruntime's own per-node
profiler, in one process, the two alternating round by round. It shows which layers make a model's ratio in
the suite's table (README) and what a kernel change would have to win.

    python -m benchmarks.layers benchmarks/work/models/resnet50.onnx
    python -m benchmarks.layers model.onnx --build out/ --rounds 5 --repeat 20 --top 40
    python -m benchmarks.layers model.onnx -t x86_64   # the AVX2 level on an AVX-512 machine

Layers are matched through the ONNX graph. mlcc names a step after the first node it runs (a Conv whose
BatchNormalization, Add and Relu it fused). onnxruntime names a node it made after the tensor that node writes,
with a suffix for its layout (r2_nchwc: the Relu's output). So each onnxruntime node is walked back, first
inputs first, to the nearest node that is an mlcc step. What matches nothing (onnxruntime's layout reorders,
mlcc's transposes) is listed apart. Both sides are instrumented, so their sums exceed the suite's latencies.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import onnx

from benchmarks import measure
from mlcc import bench as mlcc_bench, runners
from mlcc.errors import MlccError, UsageError
from mlcc.frontend import load_model
from mlcc.pipeline import BuildOptions, build

LAYOUT_SUFFIXES = ("_nchwc",)  # onnxruntime's names for nodes it moved into its blocked layout


def ort_node_times(model_path: Path, feeds: dict, warmup: int, repeat: int, prefix: Path,
                   clock: str = "thread_cpu") -> dict[str, dict]:
    """onnxruntime's per-node kernel times: {node: {"op", "ms" (median of `repeat` runs after `warmup`)}} on
    `clock`, as mlcc's steps (bench.CLOCKS). Its profiler has wall time only, so for thread CPU time each run's
    node times are scaled by that run's thread CPU time over its wall time (one thread: the nodes run on the
    calling one)."""
    session = measure.ort_session(model_path, profile_prefix=str(prefix))
    cpu_share = []  # per run: thread CPU time / wall time
    for _ in range(warmup + repeat):
        wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
        session.run(None, feeds)
        wall, cpu = time.perf_counter_ns() - wall, time.thread_time_ns() - cpu
        cpu_share.append(min(1.0, cpu / wall) if wall > 0 and clock == "thread_cpu" else 1.0)
    events = json.loads(Path(session.end_profiling()).read_text())
    times: dict[str, list[float]] = collections.defaultdict(list)
    ops: dict[str, str] = {}
    run = 0  # a run's node events come before its model_run event
    for event in events:
        name = event.get("name", "")
        if event.get("cat") == "Session" and name == "model_run":
            run += 1
        elif event.get("cat") == "Node" and name.endswith("_kernel_time") and run < len(cpu_share):
            node = name[: -len("_kernel_time")]
            times[node].append(event["dur"] / 1000.0 * cpu_share[run])
            ops[node] = event.get("args", {}).get("op_name", "")
    return {node: {"op": ops[node], "ms": statistics.median(t[warmup:] or t)} for node, t in times.items()}


def step_matcher(graph: onnx.GraphProto, steps: set[str]):
    """A function from an onnxruntime node's name to the mlcc step that ran the same layer (None if none)."""
    nodes = {n.name: n for n in graph.node if n.name}
    producer = {out: n for n in graph.node for out in n.output}

    def start(name: str):
        for candidate in [name] + [name[: -len(s)] for s in LAYOUT_SUFFIXES if name.endswith(s)]:
            if candidate in nodes:
                return nodes[candidate]
            if candidate in producer:
                return producer[candidate]
        return None

    def match(name: str) -> str | None:
        node, seen = start(name), set()
        stack = [node] if node is not None else []
        while stack:  # depth first, first inputs first: an Add's first input is its own branch
            node = stack.pop()
            if node.name in steps:
                return node.name
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(reversed([producer[i] for i in node.input if i in producer]))
        return None

    return match


def describe(model: onnx.ModelProto) -> dict[str, tuple[str, str]]:
    """Each node's `input * weights -> output` shapes (ONNX's own layout) and its kind for the sums: its op,
    and a convolution's kernel and stride (Conv 3x3/2)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    weights = {t.name: list(t.dims) for t in model.graph.initializer}
    dims = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
            for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output)}
    dims.update(weights)

    def text(name: str) -> str:
        return "x".join(map(str, dims[name])) if name in dims else "?"

    out = {}
    for n in model.graph.node:
        ins = [text(i) for i in n.input[:2] if i]
        kind = n.op_type
        if n.op_type == "Conv" and len(n.input) > 1 and n.input[1] in weights:
            kind += " " + "x".join(map(str, weights[n.input[1]][2:]))
            strides = next((list(a.ints) for a in n.attribute if a.name == "strides"), [])
            if any(s > 1 for s in strides):
                kind += "/" + "x".join(map(str, strides)) if len(set(strides)) > 1 else f"/{strides[0]}"
            if weights[n.input[1]][1] == 1 and next((a.i for a in n.attribute if a.name == "group"), 1) > 1:
                kind += " depthwise"
        out[n.name] = (f"{' * '.join(ins)} -> {text(n.output[0]) if n.output else '?'}", kind)
    return out


def compare(model_path: Path, build_dir: Path | None, rounds: int, warmup: int, repeat: int,
            target: str = "host") -> dict:
    """Both profiles, `rounds` times alternating, and the layers matched: medians of the rounds' medians.
    A missing or unreadable model or build folder, or a build of another model, raises an MlccError."""
    model = load_model(model_path)
    with tempfile.TemporaryDirectory(prefix="mlcc-layers-") as tmp:
        work = Path(tmp)
        if build_dir is None:
            build_dir, _ = build(model_path, BuildOptions(target=target, out_dir=work / "build"))
        report = runners.read_report(build_dir)
        _check_same_inputs(model, report, model_path, build_dir)
        feeds = mlcc_bench.random_feeds(report)
        mlcc_rounds, ort_rounds = [], []
        for r in range(rounds):
            profile = mlcc_bench.profile(build_dir, warmup, repeat)
            clock = profile["clock"]
            mlcc_rounds.append({row["node"]: row for row in profile["rows"]})
            ort_rounds.append(ort_node_times(model_path, feeds, warmup, repeat, work / f"round{r}_", clock))
    steps = mlcc_rounds[0]
    match = step_matcher(model.graph, set(steps))
    ort_ms: dict[str, float] = collections.defaultdict(float)
    ort_nodes: dict[str, list[str]] = collections.defaultdict(list)
    unmatched = {}
    for node in ort_rounds[0]:
        ms = statistics.median(r[node]["ms"] for r in ort_rounds if node in r)
        step = match(node)
        if step is None:
            unmatched[node] = {"op": ort_rounds[0][node]["op"], "ms": ms}
        else:
            ort_ms[step] += ms
            ort_nodes[step].append(node)
    described = describe(model)
    rows = []
    for node, row in steps.items():
        mlcc_ms = statistics.median(r[node]["ms"] for r in mlcc_rounds)
        shapes, kind = described.get(node, ("", row["op"]))
        rows.append({"step": node, "op": row["op"], "kind": kind, "shapes": shapes, "mlcc_ms": mlcc_ms,
                     "ort_ms": ort_ms.get(node), "ort_nodes": ort_nodes.get(node, []), "flops": row["flops"]})
    return {"model": model_path.name, "target": report["target"], "rounds": rounds, "repeat": repeat,
            "clock": clock, "rows": rows, "ort_unmatched": unmatched}


def _check_same_inputs(model: onnx.ModelProto, report: dict, model_path: Path, build_dir: Path) -> None:
    """The build's inputs are the model's (by name), so one set of feeds runs both sides."""
    initializers = {t.name for t in model.graph.initializer}
    wanted = sorted(i.name for i in model.graph.input if i.name not in initializers)
    built = sorted(spec["name"] for spec in report["inputs"])
    if built != wanted:
        raise UsageError(f"--build {build_dir} was built from another model: its inputs {built} are not "
                         f"{model_path}'s {wanted}")


def _clock_note(clock: str) -> str:
    if clock == "thread_cpu":
        return ("the thread's CPU time on both sides (mlcc's steps read it; onnxruntime's profiler gives wall time, "
                "each run's nodes scaled by that run's thread CPU / wall)")
    return f"{mlcc_bench.CLOCKS[clock]} on both sides"


def markdown(result: dict, top: int) -> str:
    rows = result["rows"]
    matched = [r for r in rows if r["ort_ms"] is not None]
    mlcc_total = sum(r["mlcc_ms"] for r in rows)
    ort_total = sum(r["ort_ms"] for r in matched) + sum(u["ms"] for u in result["ort_unmatched"].values())
    lines = [f"# {result['model']}: mlcc {result['target']} vs onnxruntime (1 thread), layer by layer",
             "",
             f"- medians of {result['rounds']} alternating rounds of {result['repeat']} profiled runs each; "
             f"instrumented sums: mlcc {mlcc_total:.3f} ms, onnxruntime {ort_total:.3f} ms",
             f"- clock: {_clock_note(result['clock'])}",
             f"- the {top} layers where mlcc loses or wins the most time, then the sums by kind of layer",
             "",
             "| mlcc step | op | shapes (ONNX layout) | mlcc ms | ORT ms | mlcc - ORT | mlcc GFLOP/s | ORT GFLOP/s |",
             "|---|---|---|---:|---:|---:|---:|---:|"]

    def rate(flops: int, ms: float | None) -> str:
        return f"{flops / (ms * 1e6):.1f}" if ms and flops else "-"

    for r in sorted(matched, key=lambda r: -abs(r["mlcc_ms"] - r["ort_ms"]))[:top]:
        lines.append(f"| {r['step']} | {r['op']} | {r['shapes']} | {r['mlcc_ms']:.3f} | {r['ort_ms']:.3f} | "
                     f"{r['mlcc_ms'] - r['ort_ms']:+.3f} | {rate(r['flops'], r['mlcc_ms'])} | "
                     f"{rate(r['flops'], r['ort_ms'])} |")
    by_op: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for r in matched:
        by_op[r["kind"]][0] += r["mlcc_ms"]
        by_op[r["kind"]][1] += r["ort_ms"]
        by_op[r["kind"]][2] += 1
    lines += ["", "| kind (matched steps) | steps | mlcc ms | ORT ms | mlcc / ORT |", "|---|---:|---:|---:|---:|"]
    for op, (m, o, n) in sorted(by_op.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| {op} | {n} | {m:.3f} | {o:.3f} | {m / o if o else float('nan'):.2f} |")
    alone = [f"{r['step']} ({r['op']}) {r['mlcc_ms']:.3f} ms" for r in rows if r["ort_ms"] is None]
    ort_alone = [f"{n} ({u['op']}) {u['ms']:.3f} ms" for n, u in result["ort_unmatched"].items()]
    lines += ["", f"- mlcc steps without an onnxruntime node: {', '.join(alone) or 'none'}",
              f"- onnxruntime nodes without an mlcc step: {', '.join(ort_alone) or 'none'}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.layers", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", type=Path, help="an ONNX model")
    p.add_argument("--build", type=Path, help="mlcc's native build of it (default: build it now for --target)")
    p.add_argument("-t", "--target", default="host", help="the native target to build for [host]")
    p.add_argument("--rounds", type=int, default=3, help="alternating rounds [3]")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs per round [3]")
    p.add_argument("--repeat", type=int, default=15, help="profiled runs per round [15]")
    p.add_argument("--top", type=int, default=25, help="layers shown [25]")
    p.add_argument("--json", action="store_true", help="every layer as JSON instead of the table")
    args = p.parse_args(argv)
    try:
        result = compare(args.model, args.build, max(1, args.rounds), max(0, args.warmup), max(1, args.repeat),
                         args.target)
    except MlccError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, indent=1) if args.json else markdown(result, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
