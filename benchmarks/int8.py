"""int8 against fp32: suite models quantized by onnxruntime.quantization (QDQ static, per-channel int8 weights,
uint8 activations, calibrated on 4 seeded random batches), then mlcc int8 (the host target, plain AVX2 and
AVX-512 VNNI, where this CPU runs them), mlcc fp32 and onnxruntime int8 and fp32 (one thread, all optimisations),
alternating rounds, median of the rounds' medians (CPU time for mlcc). Also arena and weights bytes.

    python -m benchmarks.int8 [--models resnet8,ds_cnn_kws,mobilenet_v2] [--rounds 3] [--budget 2] [--out PATH]

Writes benchmarks/results/int8.json and int8.md (or PATH.json and PATH.md). The BERT encoder is quantized
dynamically, as in python -m benchmarks' int8 rows.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx.version_converter

from benchmarks import measure, models
from mlcc.targets import host_target, resolve

RESULTS = Path(__file__).resolve().parent / "results"


QDQ_OPSET = 13  # QuantizeLinear / DequantizeLinear take a per-channel axis from opset 13


def quantize(model: onnx.ModelProto, src: Path, dst: Path) -> None:
    from onnxruntime import quantization as q

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), QDQ_OPSET)
    if opset < QDQ_OPSET:  # the zoo's models (opset 3 to 9): onnxruntime.quantization keeps a model's opset
        model = onnx.version_converter.convert_version(model, QDQ_OPSET)
    onnx.save(model, str(src))
    specs = measure.input_specs(model)

    class Calibration(q.CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{s["name"]: np.random.default_rng(seed).standard_normal(s["shape"]).astype(np.float32)
                                  for s in specs} for seed in range(4)])

        def get_next(self):
            return next(self.batches, None)

    q.quantize_static(str(src), str(dst), Calibration(), quant_format=q.QuantFormat.QDQ, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)


def quantize_dynamic(model: onnx.ModelProto, src: Path, dst: Path) -> None:
    """Dynamic quantization as for a transformer: int8 weights of the MatMuls, activations quantized at run time
    (DynamicQuantizeLinear + MatMulInteger)."""
    from onnxruntime import quantization as q

    onnx.save(model, str(src))
    q.quantize_dynamic(str(src), str(dst), weight_type=q.QuantType.QInt8)


# How python -m benchmarks quantizes a suite model for its int8 rows: the transformer dynamically, the conv nets
# and the MLPerf Tiny models statically (QDQ, per channel); the MLP and the GEMM kernel rate get no int8 row
DYNAMIC = ("bert_encoder",)
NOT_QUANTIZED = ("mlp", "gemm_1024")


def scheme(name: str) -> str | None:
    """"dynamic", "static" or None (no int8 row) for a suite model."""
    return "dynamic" if name in DYNAMIC else None if name in NOT_QUANTIZED else "static"


def quantize_for_suite(name: str, model: onnx.ModelProto, src: Path, dst: Path) -> None:
    (quantize_dynamic if scheme(name) == "dynamic" else quantize)(model, src, dst)


def exact_outputs(path: Path, feeds: dict) -> dict:
    """The exact integer semantics: onnxruntime with graph optimisation off, which runs the QDQ graph as written
    (its fused int8 kernels are no reference: some saturate)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def int8_targets() -> list[str]:
    """The host target, plain AVX2 (x86_64: many CPUs have no VNNI) and the VNNI one, those this CPU runs."""
    from mlcc.targets import _host_cpu_flags

    names = [host_target().name]
    for name in ("x86_64", "x86_64-avx512-vnni"):
        target = resolve(name)
        if target.machine == host_target().machine and set(target.cpu_flags) <= _host_cpu_flags() and name not in names:
            names.append(name)
    return names


def run(names: list[str], rounds: int, budget: float) -> dict:
    logging.disable(logging.WARNING)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="mlcc-int8-") as tmp:
        work = Path(tmp)
        for name in names:
            model = models.SUITE[name]()
            fp32, int8 = work / f"{name}.onnx", work / f"{name}.int8.onnx"
            quantize_for_suite(name, model, fp32, int8)  # the BERT encoder dynamically, as python -m benchmarks
            specs = measure.input_specs(model)
            feeds = {s["name"]: np.random.default_rng(0).standard_normal(s["shape"]).astype(np.float32) for s in specs}
            builds = {"fp32": measure.mlcc_build(fp32, host_target().name, work / f"{name}-fp32")}
            for target in int8_targets():
                builds[f"int8 {target}"] = measure.mlcc_build(int8, target, work / f"{name}-int8-{target}")
            times: dict[str, list[dict]] = {}
            for _ in range(rounds):
                for label, built in builds.items():
                    times.setdefault(f"mlcc {label}", []).append(measure.mlcc_latency(built, feeds, None, budget, 200))
                for label, path in (("onnxruntime int8", int8), ("onnxruntime fp32", fp32)):
                    times.setdefault(label, []).append(measure.ort_latency(path, feeds, budget, 200)[0])
            rows[name] = {"latency": {k: measure.merge_rounds(v) for k, v in times.items()},
                          "bytes": {k: {"arena": b.get("arena_bytes"), "weights": b.get("weights_bytes")}
                                    for k, b in builds.items()}}
    return {"isa": measure.host_isa(), "cpu": cpu_name(), "host_target": host_target().name, "rounds": rounds, "models": rows}


def cpu_name() -> str:
    """The CPU's model name and whether it has AVX-512 VNNI (int8 dot products), from /proc/cpuinfo."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown CPU"
    model = next((line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")), "unknown CPU")
    return f"{model}, {'with' if 'avx512_vnni' in info else 'no'} AVX-512 VNNI"


def table(results: dict) -> str:
    where = f"{results['cpu']}; host target {results['host_target']}" if "cpu" in results else results["isa"]
    lines = [f"int8 vs fp32 on {where} ({results['rounds']} alternating rounds; mlcc: CPU time, "
             "onnxruntime: wall time, one thread). Reproduce: `python -m benchmarks.int8`.", ""]
    for name, row in results["models"].items():
        lat = row["latency"]
        lines.append(f"### {name}")
        lines.append("| run | median ms | arena bytes | weights bytes |")
        lines.append("|---|---|---|---|")
        for label, t in lat.items():
            ms = t.get("cpu_median_ms", t.get("median_ms"))
            size = row["bytes"].get(label.removeprefix("mlcc "), {})
            cell = f"{ms:.3f}" if ms is not None else t.get("error", "?")[:60]
            lines.append(f"| {label} | {cell} | {size.get('arena', '')} | {size.get('weights', '')} |")
        lines.append("")
    speedups = fp32_speedups(results)
    if speedups:
        lines.append("mlcc fp32 time / mlcc int8 time (issue 21 asks >= 2 on the host target; int8 must pay without VNNI too):")
        lines.append("")
        lines.append("| int8 build | " + " | ".join(results["models"]) + " | geomean |")
        lines.append("|---" * (len(results["models"]) + 2) + "|")
        for label, ratios in speedups.items():
            cells = [f"{ratios[name]:.2f}" if name in ratios else "" for name in results["models"]]
            geomean = float(np.exp(np.mean(np.log(list(ratios.values())))))
            lines.append(f"| {label} | " + " | ".join(cells) + f" | {geomean:.2f} |")
        lines.append("")
    lines.append(REQUANTIZATION)
    return "\n".join(lines)


REQUANTIZATION = (
    "Requantization on x86 is the fixed-point multiply and shift of the reference on every form (so every form "
    "is bit-identical to it, which the kernel tests hold them to): AVX-512 in 64-bit lanes (vpmuldq, vpsravq); "
    "AVX2 in 32-bit lanes after the 64-bit product (vpsravd on bits 31-62) where a panel's shifts are all 32 or "
    "more, else the 64-bit form with a 2^62 offset standing in for the arithmetic shift AVX2 lacks. A float "
    "requantization (fewer operations, but a step off on rounding ties) has not been measured against it.")


def fp32_speedups(results: dict) -> dict[str, dict[str, float]]:
    """{int8 build: {model: fp32 ms / int8 ms}} from CPU medians."""
    out: dict[str, dict[str, float]] = {}
    for name, row in results["models"].items():
        lat = row["latency"]
        fp32 = lat.get("mlcc fp32", {}).get("cpu_median_ms")
        for label, t in lat.items():
            ms = t.get("cpu_median_ms")
            if label.startswith("mlcc int8") and ms and fp32:
                out.setdefault(label.removeprefix("mlcc "), {})[name] = fp32 / ms
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet8,ds_cnn_kws,mobilenet_v2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--out", type=Path, default=RESULTS / "int8", help="results without extension [%(default)s]")
    args = parser.parse_args()
    results = run(args.models.split(","), args.rounds, args.budget)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(table(results) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
