"""python -m benchmarks.dynamic_shapes: one artifact built with run-time dimensions against a static build of each
measured size, on host (cffi, in process) and wasm32 (wasmtime, in process), for three models:

- bert: tests/models/test_dynamic_bert.py's encoder (transformers' BertModel, random weights; hidden 64, 2 layers,
  4 heads unless --hidden/--layers/--heads say otherwise; its FFN 4 x hidden wide, the test's 2 x), the sequence
  1..--longest;
- crnn: tests/models/test_dynamic_crnn.py's recogniser (convolutions, pools, a bidirectional LSTM and GRU over
  the columns), the width 32..640;
- fcn: tests/models/test_dynamic_fcn.py's UNet-like segmenter (Winograd, ConvTranspose, two Resizes), H and W
  64..256;
- gpt2-kv: a GPT-2 decoding step with its key/value cache (samples/textgen/train.py's GPT2LMHeadModel, random
  weights, hidden 128, 4 layers, 4 heads by default), past 0..--context - 1, timed per generated token.

Each round times a batch of calls of NAME_run_dims at the size (dynamic) and of NAME_run_v of the static build
of that size, alternating which goes first, each timed inside C by mlcc bench's harness (thread CPU time, which
other load on a shared machine barely changes), and the table gives medians of the per-call medians over the
rounds, the ratio dynamic / static (goal: within 10%), and the arenas (the dynamic one is planned at the maximum
and must equal the static build's there). Writes benchmarks/results/dynamic_shapes.md and .json; rows of models
and targets not run this time are kept from the last results.

    python -m benchmarks.dynamic_shapes --models bert,crnn,fcn  # on host and wasm32
    python -m benchmarks.dynamic_shapes --models gpt2-kv --sizes 1,16,64,128,255
    python -m benchmarks.dynamic_shapes --models crnn,fcn --targets host --rounds 9
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent


def export_bert(path: Path, hidden: int, layers: int, heads: int, longest: int) -> None:
    from tests.models.test_dynamic_bert import export_bert

    export_bert(path, hidden, layers, heads, 4 * hidden, longest)


def bert_feeds(size: int) -> list[np.ndarray]:
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


def export_torch(module, example, path: Path, name: str, dynamic_axes: dict) -> None:
    import torch

    with torch.no_grad():
        torch.onnx.export(module.eval(), example, str(path), input_names=[name], output_names=["y"], opset_version=17,
                          dynamo=False, dynamic_axes=dynamic_axes)


def export_crnn(path: Path, args) -> None:
    import torch

    from tests.models.test_dynamic_crnn import HEIGHT, Recogniser

    torch.manual_seed(0)
    export_torch(Recogniser(), torch.randn(1, 1, HEIGHT, 100), path, "image", {"image": {3: "W"}, "y": {0: "T"}})


def export_fcn(path: Path, args) -> None:
    import torch

    from tests.models.test_dynamic_fcn import Segmenter

    torch.manual_seed(0)
    export_torch(Segmenter(), torch.randn(1, 3, 64, 80), path, "image", {"image": {2: "H", 3: "W"}, "y": {2: "H", 3: "W"}})


def image(*shape) -> list[np.ndarray]:
    return [np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)]


@dataclass(frozen=True)
class Model:
    export: Callable  # (path, args)
    dims: Callable  # args -> {name: (min, max)}
    sizes: str  # default --sizes: comma-separated, each a size or HxW
    feeds: Callable  # size tuple -> input arrays in ONNX order
    label: str  # the size column's heading
    title: str  # what the model is, for the table


MODELS = {
    "bert": Model(lambda path, a: export_bert(path, a.hidden or 64, a.layers or 2, a.heads, a.longest), lambda a: {"seq": (1, a.longest)},
                  "1,8,32,64,128", lambda s: bert_feeds(s[0]), "seq",
                  "BERT encoder (transformers' BertModel, random weights, hidden 64, 2 layers, 4 heads)"),
    "crnn": Model(export_crnn, lambda a: {"W": (32, 640)}, "32,101,257,400,640", lambda s: image(1, 1, 32, s[0]), "W",
                  "CRNN-style recogniser (tests/models/test_dynamic_crnn.py: convolutions, pools, BiLSTM + BiGRU, CTC head)"),
    "fcn": Model(export_fcn, lambda a: {"H": (64, 256), "W": (64, 256)}, "64x64,65x97,128x77,201x256,256x256",
                 lambda s: image(1, 3, *s), "H x W",
                 "UNet-like segmenter (tests/models/test_dynamic_fcn.py: Winograd, ConvTranspose, nearest and bilinear Resize)"),
    "gpt2-kv": Model(lambda path, a: export_kv(path, a.hidden or 128, a.layers or 4, a.heads, a.context),
                     lambda a: {"past": (0, a.context - 1)}, "1,16,64,128,255", lambda s: kv_feeds(s[0]), "past",
                     "GPT-2 step with a key/value cache (one new token; samples/textgen/train.py's model, random weights, "
                     "hidden 128, 4 layers, 4 heads)"),
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

    def __init__(self, folder: Path, target: str, size: tuple, dynamic: bool, scratch: Path, feeds_at: Callable):
        from mlcc import bench, runners
        from mlcc.targets import resolve

        report = runners.read_report(folder)
        feeds = dict(zip([i["name"] for i in report["inputs"]], feeds_at(size)))
        if dynamic:  # the harness calls NAME_run_v: name the wrapper so
            wrapper = f"{report['name']}_at_{'x'.join(map(str, size))}.c"  # beside NAME.h, which it includes
            (folder / wrapper).write_text(WRAPPER.format(name=report["name"], sizes=", ".join(map(str, size))))
            report = dict(report, name=f"{report['name']}_at", files=[*report["files"], wrapper])
        self.target = resolve(target)
        if self.target.is_wasm:
            self.run = bench._WasmLinked(folder, report, self.target, feeds, None, 4096)
            self.time = lambda n: self.run.call(n)[1]
        else:
            from cffi import FFI

            library = scratch / f"{report['name']}_{'dynamic' if dynamic else 'static'}_{'x'.join(map(str, size))}.so"
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


def per_call(linked: Linked, seconds: float) -> float:
    """Median thread CPU seconds per call over a batch of about `seconds`."""
    first = float(np.median(linked.time(3))) * 1e-9
    n = int(min(4096, max(5, seconds / max(first, 1e-7))))
    return float(np.median(linked.time(n))) * 1e-9


def build(model: Path, target: str, out_dir: Path, dims: dict, name: str) -> dict:
    from mlcc.pipeline import BuildOptions, build as run_build

    _, report = run_build(model, BuildOptions(target=target, out_dir=out_dir, name=name, dims=dims))
    return report


def parse_size(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("x"))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.dynamic_shapes", description=__doc__.split("\n\n")[0])
    p.add_argument("--models", "--model", default="bert,crnn,fcn", help="comma-separated: bert, crnn, fcn, gpt2-kv [bert,crnn,fcn]")
    p.add_argument("--sizes", default=None, help="sizes to measure (one model): comma-separated, N or HxW")
    p.add_argument("--targets", default="host,wasm32")
    p.add_argument("--rounds", type=int, default=7, help="rounds of each build, alternating [7]")
    p.add_argument("--seconds", type=float, default=0.25, help="timed calls per round [0.25 s]")
    p.add_argument("--hidden", type=int, default=None, help="[bert 64, gpt2-kv 128]")
    p.add_argument("--layers", type=int, default=None, help="[bert 2, gpt2-kv 4]")
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--longest", type=int, default=128, help="the bert sequence's maximum [128]")
    p.add_argument("--context", type=int, default=256, help="gpt2-kv's context: past 0..context - 1 [256]")
    args = p.parse_args(argv)
    names = args.models.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-dynamic-") as tmp:
        folder = Path(tmp)
        for name in names:
            spec = MODELS[name]
            model = folder / f"{name}.onnx"
            spec.export(model, args)
            dims = spec.dims(args)
            for target in args.targets.split(","):
                dynamic = build(model, target, folder / f"{name}-{target}-dynamic", dims, name)
                for size in map(parse_size, (args.sizes or spec.sizes).split(",")):
                    static = build(model, target, folder / f"{name}-{target}-{'x'.join(map(str, size))}",
                                   dict(zip(sorted(dims), size)), name)
                    calls = {"dynamic": Linked(folder / f"{name}-{target}-dynamic", target, size, True, folder, spec.feeds),
                             "static": Linked(folder / f"{name}-{target}-{'x'.join(map(str, size))}", target, size, False,
                                              folder, spec.feeds)}
                    times = {"dynamic": [], "static": []}
                    for round_ in range(args.rounds):
                        for kind in ("dynamic", "static") if round_ % 2 else ("static", "dynamic"):
                            times[kind].append(per_call(calls[kind], args.seconds))
                    dyn, sta = statistics.median(times["dynamic"]), statistics.median(times["static"])
                    rows.append({"model": name, "target": target, "size": "x".join(map(str, size)),
                                 "dynamic_us": round(dyn * 1e6, 2), "static_us": round(sta * 1e6, 2),
                                 "ratio": round(dyn / sta, 3),
                                 "round_ratios": [round(d / s, 3) for d, s in zip(times["dynamic"], times["static"])],
                                 "dynamic_arena_bytes": dynamic["arena_bytes"], "static_arena_bytes": static["arena_bytes"],
                                 "dynamic_arena_at_min_bytes": dynamic["arena_bytes_at_min"]})
                    print(json.dumps(rows[-1]), flush=True)
    cpu = next((line.split(":", 1)[1].strip() for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
                if line.startswith("Model name")), platform.processor())
    results = HERE / "results" / "dynamic_shapes.json"
    saved = json.loads(results.read_text()) if results.exists() else {}
    run = f"--models {args.models} --targets {args.targets} --rounds {args.rounds}" + (f" --sizes {args.sizes}" if args.sizes else "")
    for name in names:  # this run's rows replace the last ones of the same model and target
        measured = [dict(r, run=run) for r in rows if r["model"] == name]
        kept = [r for r in saved.get(name, {}).get("rows", []) if r["target"] not in args.targets.split(",")]
        saved[name] = {"cpu": cpu, "rows": sorted(kept + measured, key=lambda r: r["target"])}
    results.write_text(json.dumps(saved, indent=1) + "\n")
    text = render(saved, args)
    (HERE / "results" / "dynamic_shapes.md").write_text(text)
    print(text)


def render(saved: dict, args) -> str:
    """The results as markdown, one section per model; a section written by an earlier form of this script is
    kept as it was."""
    sections = []
    for name, spec in MODELS.items():
        if name not in saved:
            continue
        if "section" in saved[name]:
            sections.append(saved[name]["section"])
            continue
        dims = ", ".join(f"{d} {lo}..{hi}" for d, (lo, hi) in spec.dims(args).items())
        sections.append(f"## {name}: one artifact for {dims} vs a static build per size\n\n{spec.title}; "
                        f"{saved[name]['cpu']}, host build x86_64-avx512, wasm32 in wasmtime. Each row's command: "
                        "`python -m benchmarks.dynamic_shapes` with the arguments in its last column.\n\n"
                        f"| target | {spec.label} | dynamic µs | static µs | dynamic / static | arena dynamic | arena static | run |\n"
                        "|---|---:|---:|---:|---:|---:|---:|---|\n" +
                        "".join(f"| {r['target']} | {r['size']} | {r['dynamic_us']} | {r['static_us']} | {r['ratio']:.3f} | "
                                f"{r['dynamic_arena_bytes']:,} | {r['static_arena_bytes']:,} | `{r['run']}` |\n"
                                for r in saved[name]["rows"]))
    return ("# One artifact per model for every size in a range vs a static build per size\n\nThread CPU time per call "
            "inside C (mlcc bench's harness), medians over alternating rounds (dynamic and static in one process).\n\n"
            + "\n".join(sections))


if __name__ == "__main__":
    main()
