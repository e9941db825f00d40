"""python -m benchmarks.wasm_ab: two wasm32 builds of one model, A and B (say, main's and a branch's), timed in
wasmtime in one process, alternating round by round, with onnxruntime-web under node in the same rounds; each
round's figure is the median thread CPU time of its runs (mlcc bench's harness; onnxruntime-web: the node
process's CPU time over each session.run), the result the median of the rounds'.

    mlcc build model.onnx -t wasm32 -o /tmp/a        # with one tree on PYTHONPATH
    mlcc build model.onnx -t wasm32 -o /tmp/b        # with the other
    python -m benchmarks.wasm_ab /tmp/a /tmp/b model.onnx --rounds 5 --budget 2

Prints one JSON line: A, B and onnxruntime-web in ms, B/A, A/web and B/web.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import onnx

from benchmarks import measure
from mlcc import bench as mlcc_bench


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.wasm_ab", description=__doc__.split("\n\n")[0])
    p.add_argument("a", type=Path, help="build folder A (mlcc build -t wasm32)")
    p.add_argument("b", type=Path, help="build folder B")
    p.add_argument("model", type=Path, help="the ONNX model both were built from (for onnxruntime-web)")
    p.add_argument("--rounds", type=int, default=5, help="alternating rounds [5]")
    p.add_argument("--budget", type=float, default=2.0, help="seconds of timed runs per side and round [2]")
    p.add_argument("--no-web", action="store_true", help="A and B only")
    args = p.parse_args(argv)
    args.model = args.model.resolve()  # node runs in benchmarks/web
    specs = measure.input_specs(onnx.load(str(args.model), load_external_data=False))
    first = mlcc_bench.bench(args.a, warmup=1, repeat=1)["median_ms"] / 1e3
    warmup, repeat = measure.repeats_for(first, args.budget, 200)
    if not args.no_web and (note := measure.install_web()) is not None:  # npm ci into benchmarks/web
        sys.exit(f"error: onnxruntime-web: {note}")
    cpu: dict[str, list[float]] = {"a": [], "b": [], "web": []}
    for _ in range(args.rounds):
        for side in ("a", "b"):
            cpu[side].append(mlcc_bench.bench(getattr(args, side), warmup, repeat)["cpu_median_ms"])
        if not args.no_web:
            web = measure.web_latency(args.model, specs, first, args.budget, 200)
            if "error" in web:
                sys.exit(f"error: onnxruntime-web: {web['error']}")
            cpu["web"].append(web["cpu_median_ms"])
    ms = {side: statistics.median(v) for side, v in cpu.items() if v}
    out = {"a_ms": ms["a"], "b_ms": ms["b"], "b/a": ms["b"] / ms["a"], "runs": repeat, "rounds": args.rounds}
    if "web" in ms:
        out |= {"web_ms": ms["web"], "a/web": ms["a"] / ms["web"], "b/web": ms["b"] / ms["web"]}
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
