"""python -m benchmarks.dynamic_shapes: one artifact built with a run-time sequence length against a static
build of each measured length, on host (cffi, in process) and wasm32 (wasmtime, in process).

The model is tests/models/test_dynamic_bert.py's encoder (transformers' BertModel, random weights; hidden 64,
2 layers, 4 heads unless --hidden/--layers/--heads say otherwise), exported with the sequence as a named dim.
Each round times a batch of calls of NAME_run_dims at the size (dynamic) and of NAME_run_v of the static build
of that size, alternating, and the table gives medians of the per-call times over the rounds, the ratio
dynamic / static (goal: within 10%), and the arenas (the dynamic one is planned at the maximum and must equal
the static build's there). Writes benchmarks/results/dynamic_shapes.md and .json.

    python -m benchmarks.dynamic_shapes                       # sizes 1,8,32,64,128 on host and wasm32
    python -m benchmarks.dynamic_shapes --targets host --rounds 9
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def export(path: Path, hidden: int, layers: int, heads: int, longest: int) -> None:
    import torch
    import transformers

    config = transformers.BertConfig(vocab_size=100, hidden_size=hidden, num_hidden_layers=layers,
                                     num_attention_heads=heads, intermediate_size=4 * hidden,
                                     max_position_embeddings=longest, attn_implementation="eager")
    torch.manual_seed(0)
    encoder = transformers.BertModel(config, add_pooling_layer=False).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    ids, mask = torch.zeros(1, 16, dtype=torch.int64), torch.ones(1, 16, dtype=torch.int64)
    with torch.no_grad():
        torch.onnx.export(LastHiddenState().eval(), (ids, mask), str(path), input_names=["input_ids", "attention_mask"],
                          output_names=["y"], opset_version=14, dynamo=False,
                          dynamic_axes={"input_ids": {1: "seq"}, "attention_mask": {1: "seq"}, "y": {1: "seq"}})


def feeds(size: int) -> list[np.ndarray]:
    rng = np.random.default_rng(size)
    return [rng.integers(0, 100, (1, size)).astype(np.int64), np.ones((1, size), np.int64)]


class HostCall:
    """Repeated calls of one entry point of a host build, buffers bound once."""

    def __init__(self, out_dir: Path, size: int, dynamic: bool):
        from mlcc import runners

        self.model = runners.load(out_dir)
        ffi = self.model.ffi
        self.keep = feeds(size) + [np.empty(int(np.prod(o["shape"])), np.float32) for o in self.model.outputs]
        ins = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in self.keep[:2]])
        outs = ffi.new("void *[]", [ffi.cast("void *", self.keep[2].ctypes.data)])
        arena = ffi.cast("void *", self.model.arena.ctypes.data)
        self.refs = (ins, outs)
        if dynamic:
            dims, shapes = ffi.new("size_t[]", [size]), ffi.new("size_t[]", 3)
            self.refs += (dims, shapes)
            self.call = lambda: self.model.entry_dims(dims, ins, outs, shapes, arena)
        else:
            self.call = lambda: self.model.entry(ins, outs, arena)


class WasmCall:
    """Repeated calls of one export of a wasm32 build in wasmtime, memory laid out once."""

    def __init__(self, out_dir: Path, size: int, dynamic: bool):
        from mlcc import runners

        model = runners.load(out_dir)
        inputs = feeds(size)
        outputs = [np.empty(int(np.prod(o["shape"])), np.float32) for o in model.outputs]
        model._call(inputs, outputs, [size] if dynamic else None)  # lays out memory and grows it
        store = model.store
        in_table, out_table, dims_at, shapes_at, arena = model.layout
        if dynamic:
            self.call = lambda: model.entry_dims(store, dims_at, in_table, out_table, shapes_at, arena)
        else:
            self.call = lambda: model.entry(store, in_table, out_table, arena)


def per_call(call, seconds: float) -> float:
    n, start = 0, time.perf_counter()
    while True:
        call()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return elapsed / n


def build(model: Path, target: str, out_dir: Path, dims: dict) -> dict:
    from mlcc.pipeline import BuildOptions, build as run_build

    _, report = run_build(model, BuildOptions(target=target, out_dir=out_dir, name="bert", dims=dims))
    return report


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dynamic_shapes", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1,8,32,64,128")
    p.add_argument("--targets", default="host,wasm32")
    p.add_argument("--rounds", type=int, default=7, help="rounds of each build, alternating [7]")
    p.add_argument("--seconds", type=float, default=0.25, help="timed calls per round [0.25 s]")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--longest", type=int, default=128)
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-dynamic-") as tmp:
        folder = Path(tmp)
        model = folder / "bert.onnx"
        export(model, args.hidden, args.layers, args.heads, args.longest)
        for target in args.targets.split(","):
            caller = WasmCall if target == "wasm32" else HostCall
            dynamic = build(model, target, folder / f"{target}-dynamic", {"seq": (1, args.longest)})
            for size in sizes:
                static = build(model, target, folder / f"{target}-{size}", {"seq": size})
                calls = {"dynamic": caller(folder / f"{target}-dynamic", size, True),
                         "static": caller(folder / f"{target}-{size}", size, False)}
                times = {"dynamic": [], "static": []}
                for _ in range(args.rounds):
                    for kind in ("dynamic", "static"):
                        times[kind].append(per_call(calls[kind].call, args.seconds))
                dyn, sta = statistics.median(times["dynamic"]), statistics.median(times["static"])
                rows.append({"target": target, "seq": size, "dynamic_us": round(dyn * 1e6, 2),
                             "static_us": round(sta * 1e6, 2), "ratio": round(dyn / sta, 3),
                             "round_ratios": [round(d / s, 3) for d, s in zip(times["dynamic"], times["static"])],
                             "dynamic_arena_bytes": dynamic["arena_bytes"], "static_arena_bytes": static["arena_bytes"],
                             "dynamic_arena_at_min_bytes": dynamic["arena_bytes_at_min"]})
                print(json.dumps(rows[-1]), flush=True)
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
                if line.startswith("Model name")), platform.processor())
    header = (f"# One artifact for seq 1..{args.longest} vs a static build per size\n\n"
              f"BERT encoder (hidden {args.hidden}, {args.layers} layers, {args.heads} heads), `python -m "
              f"benchmarks.dynamic_shapes --sizes {args.sizes} --targets {args.targets} --rounds {args.rounds}`; "
              f"{cpu}, host build x86_64-avx512, wasm32 in wasmtime; medians of {args.rounds} alternating rounds "
              f"of {args.seconds} s each, per call.\n\n"
              "| target | seq | dynamic µs | static µs | dynamic / static | arena dynamic | arena static |\n"
              "|---|---:|---:|---:|---:|---:|---:|\n")
    lines = [f"| {r['target']} | {r['seq']} | {r['dynamic_us']} | {r['static_us']} | {r['ratio']:.3f} | "
             f"{r['dynamic_arena_bytes']:,} | {r['static_arena_bytes']:,} |" for r in rows]
    text = header + "\n".join(lines) + "\n"
    (HERE / "results" / "dynamic_shapes.md").write_text(text)
    (HERE / "results" / "dynamic_shapes.json").write_text(json.dumps({"cpu": cpu, "rows": rows}, indent=1) + "\n")
    print(text)


if __name__ == "__main__":
    main()
