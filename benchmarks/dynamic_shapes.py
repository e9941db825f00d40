"""python -m benchmarks.dynamic_shapes: one artifact built with a run-time sequence length against a static
build of each measured length, on host (cffi, in process) and wasm32 (wasmtime, in process).

The model (--model) is tests/models/test_dynamic_bert.py's encoder (`bert`: transformers' BertModel, random
weights; hidden 64, 2 layers, 4 heads unless --hidden/--layers/--heads say otherwise), exported with the
sequence as a named dim, or a GPT-2 decoding step with its key/value cache (`gpt2-kv`: GPT2LMHeadModel,
random weights, hidden 128, 4 layers, 4 heads by default, exported by samples/textgen/train.py with the past
length a named dim; built for past 0..longest - 1, timed per generated token at each past length).
Each round times a batch of calls of NAME_run_dims at the size (dynamic) and of NAME_run_v of the static build
of that size, alternating which goes first, each timed inside C by mlcc bench's harness (thread CPU time, which
other load on a shared machine barely changes), and the table gives medians of the per-call medians over the
rounds, the ratio dynamic / static (goal: within 10%), and the arenas (the dynamic one is planned at the maximum and must equal
the static build's there). Writes the model's section of benchmarks/results/dynamic_shapes.md and .json.

    python -m benchmarks.dynamic_shapes                       # sizes 1,8,32,64,128 on host and wasm32
    python -m benchmarks.dynamic_shapes --targets host --rounds 9
    python -m benchmarks.dynamic_shapes --model gpt2-kv --sizes 1,16,64,128,255 --longest 256
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import tempfile
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


KV = {}  # the gpt2-kv model's layers, heads and width, set by export_kv


def export_kv(path: Path, hidden: int, layers: int, heads: int, longest: int) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("textgen_train", HERE.parent / "samples" / "textgen" / "train.py")
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    train.export(train.model(seed=0, vocabulary=256, layers=layers, heads=heads, width=hidden, context=longest), path)
    KV.update(layers=layers, heads=heads, width=hidden)


def kv_feeds(past: int) -> list[np.ndarray]:
    """One token and a cache of `past` positions per layer."""
    rng = np.random.default_rng(past)
    cache = [rng.standard_normal((1, KV["heads"], past, KV["width"] // KV["heads"])).astype(np.float32)
             for _ in range(2 * KV["layers"])]
    return [np.array([[past % 256]], np.int64), *cache]


MODELS = {  # --model: (export, feeds at a size, the dim's name, its smallest size, the table's title)
    "bert": (export, feeds, "seq", 1, "BERT encoder"),
    "gpt2-kv": (export_kv, kv_feeds, "past", 0, "GPT-2 step with a key/value cache (one new token)"),
}


WRAPPER = """#include "{name}.h"
/* {name}_run_v's signature at fixed sizes, so mlcc bench's harness can call it */
int {name}_at_run_v(const void *const *inputs, void *const *outputs, void *arena)
{{
    static const {name}_dims sizes = {{ {sizes} }};
    return {name}_run_dims(&sizes, inputs, outputs, NULL, arena);
}}
"""


class Linked:
    """A build's sources linked with mlcc bench's harness (runtime_c/bench/mlcc_bench.c), timed inside C: a
    shared library on host, one wasm32 module in wasmtime. A dynamic build is called through a wrapper fixing
    its sizes, so both builds are timed the same way (a Python call into wasmtime alone costs more than a
    short model run)."""

    def __init__(self, folder: Path, target: str, size: int, dynamic: bool, scratch: Path):
        from mlcc import bench, runners
        from mlcc.targets import resolve

        report = runners.read_report(folder)
        feeds = dict(zip([i["name"] for i in report["inputs"]], feeds_at(size)))
        if dynamic:  # the harness calls NAME_run_v: name the wrapper so
            wrapper = f"{report['name']}_at_{size}.c"  # beside NAME.h, which it includes
            (folder / wrapper).write_text(WRAPPER.format(name=report["name"], sizes=size))
            report = dict(report, name=f"{report['name']}_at", files=[*report["files"], wrapper])
        self.target = resolve(target)
        if self.target.is_wasm:
            self.run = bench._WasmLinked(folder, report, self.target, feeds, None, 4096)
            self.time = lambda n: self.run.call(n)[1]
        else:
            from cffi import FFI

            library = scratch / f"{'dynamic' if dynamic else 'static'}_{size}.so"
            bench._compile_linked(folder, report, self.target, None, library, ["-shared"])
            ffi = FFI()
            ffi.cdef(bench._LINKED_CDEF)
            lib = ffi.dlopen(str(library))
            inputs, outputs, arena = bench._host_buffers(report, feeds)
            ins, outs = bench._pointer_tables(ffi, inputs, outputs)
            self.keep = (ffi, lib, inputs, outputs, arena, ins, outs)

            def time_calls(n: int) -> np.ndarray:
                total, cpu = ffi.new("uint64_t[]", n), ffi.new("uint64_t[]", n)
                status = lib.mlcc_bench_linked(ins, outs, ffi.cast("void *", arena.ctypes.data), n, total, cpu, ffi.NULL)
                assert status == 0, status
                return bench._u64s(ffi, cpu, n)
            self.time = time_calls


def feeds_at(size: int) -> list[np.ndarray]:
    return FEEDS[0](size)


FEEDS = [feeds]  # the feeds of the model being measured


def per_call(linked: Linked, seconds: float) -> float:
    """Median thread CPU seconds per call over a batch of about `seconds`."""
    first = float(np.median(linked.time(3))) * 1e-9
    n = int(min(4096, max(5, seconds / max(first, 1e-7))))
    return float(np.median(linked.time(n))) * 1e-9


def build(model: Path, target: str, out_dir: Path, dims: dict) -> dict:
    from mlcc.pipeline import BuildOptions, build as run_build

    _, report = run_build(model, BuildOptions(target=target, out_dir=out_dir, name=model.stem, dims=dims))
    return report


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dynamic_shapes", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(MODELS), default="bert")
    p.add_argument("--sizes", default="1,8,32,64,128")
    p.add_argument("--targets", default="host,wasm32")
    p.add_argument("--rounds", type=int, default=7, help="rounds of each build, alternating [7]")
    p.add_argument("--seconds", type=float, default=0.25, help="timed calls per round [0.25 s]")
    p.add_argument("--hidden", type=int, default=None, help="[bert 64, gpt2-kv 128]")
    p.add_argument("--layers", type=int, default=None, help="[bert 2, gpt2-kv 4]")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--longest", type=int, default=128, help="the bert sequence's maximum, gpt2-kv's context")
    args = p.parse_args(argv)
    make, FEEDS[0], dim, lowest, title = MODELS[args.model]
    kv = args.model == "gpt2-kv"
    hidden = args.hidden or (128 if kv else 64)
    layers = args.layers or (4 if kv else 2)
    highest = args.longest - 1 if kv else args.longest
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-dynamic-") as tmp:
        folder = Path(tmp)
        model = folder / f"{args.model.replace('-', '_')}.onnx"
        make(model, hidden, layers, args.heads, args.longest)
        for target in args.targets.split(","):
            dynamic = build(model, target, folder / f"{target}-dynamic", {dim: (lowest, highest)})
            for size in sizes:
                static = build(model, target, folder / f"{target}-{size}", {dim: size})
                calls = {"dynamic": Linked(folder / f"{target}-dynamic", target, size, True, folder),
                         "static": Linked(folder / f"{target}-{size}", target, size, False, folder)}
                times = {"dynamic": [], "static": []}
                for round_ in range(args.rounds):
                    for kind in ("dynamic", "static") if round_ % 2 else ("static", "dynamic"):
                        times[kind].append(per_call(calls[kind], args.seconds))
                dyn, sta = statistics.median(times["dynamic"]), statistics.median(times["static"])
                rows.append({"target": target, "seq": size, "dynamic_us": round(dyn * 1e6, 2),
                             "static_us": round(sta * 1e6, 2), "ratio": round(dyn / sta, 3),
                             "round_ratios": [round(d / s, 3) for d, s in zip(times["dynamic"], times["static"])],
                             "dynamic_arena_bytes": dynamic["arena_bytes"], "static_arena_bytes": static["arena_bytes"],
                             "dynamic_arena_at_min_bytes": dynamic["arena_bytes_at_min"]})
                print(json.dumps(rows[-1]), flush=True)
    save(args, rows, hidden, layers, highest)


def save(args, rows: list[dict], hidden: int, layers: int, highest: int) -> None:
    """The model's section of benchmarks/results/dynamic_shapes.md and .json (the other models' kept)."""
    _, _, dim, lowest, title = MODELS[args.model]
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
                if line.startswith("Model name")), platform.processor())
    header = (f"## {title}: one artifact for {dim} {lowest}..{highest} vs a static build per size\n\n"
              f"hidden {hidden}, {layers} layers, {args.heads} heads, `python -m benchmarks.dynamic_shapes --model "
              f"{args.model} --sizes {args.sizes} --targets {args.targets} --rounds {args.rounds} --longest "
              f"{args.longest}`; {cpu}, host build x86_64-avx512, wasm32 in wasmtime; thread CPU time per call inside "
              f"C (mlcc bench's harness), medians over {args.rounds} alternating rounds of about {args.seconds} s "
              "each.\n\n"
              f"| target | {dim} | dynamic µs | static µs | dynamic / static | arena dynamic | arena static |\n"
              "|---|---:|---:|---:|---:|---:|---:|\n")
    lines = [f"| {r['target']} | {r['seq']} | {r['dynamic_us']} | {r['static_us']} | {r['ratio']:.3f} | "
             f"{r['dynamic_arena_bytes']:,} | {r['static_arena_bytes']:,} |" for r in rows]
    results = HERE / "results" / "dynamic_shapes.json"
    saved = json.loads(results.read_text()) if results.exists() else {}
    saved = {"bert": saved} if "rows" in saved else saved  # the file before it held one model
    saved[args.model] = {"cpu": cpu, "rows": rows, "section": header + "\n".join(lines) + "\n"}
    results.write_text(json.dumps(saved, indent=1) + "\n")
    text = "# One artifact per model for every size in a range vs a static build per size\n\n" + "\n".join(
        saved[m]["section"] for m in MODELS if m in saved)
    (HERE / "results" / "dynamic_shapes.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
