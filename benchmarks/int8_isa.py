"""int8 against fp32 on the emulated Arm targets, per model: instructions one run of the whole model executes
under qemu-user (-one-insn-per-tb -d exec: one logged block per instruction), for the MLPerf Tiny models
quantized as python -m benchmarks.int8 does (QDQ static, per channel) and their fp32 builds. Not cycles (an
sdot does more per instruction than an add, and no memory system is modelled), but exact and repeatable, which
timings under emulation are not.

    python -m benchmarks.int8_isa [--models resnet8,ds_cnn_kws] [--targets aarch64-dotprod,aarch64]

Writes benchmarks/results/int8_isa.md.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from benchmarks import int8, measure, models
from mlcc.pipeline import BuildOptions, build
from mlcc.targets import resolve

RESULTS = Path(__file__).resolve().parent / "results"


def instructions(folder: Path, report: dict, feeds: list[np.ndarray], repeat: int) -> int:
    """Instructions the runner executes reading the inputs, running the model 1 + `repeat` times and writing
    the outputs, counted from qemu's log streamed through a pipe (a run of ResNet-8 logs millions of lines)."""
    target = resolve(report["target"])
    with tempfile.TemporaryDirectory(prefix="mlcc-isa-") as tmp:
        paths = []
        for i, a in enumerate(feeds):
            paths.append(Path(tmp) / f"input{i}.bin")
            paths[-1].write_bytes(a.tobytes())
        paths += [Path(tmp) / f"output{i}.bin" for i in range(len(report["outputs"]))]
        executable = folder / report["artifacts"]["executable"]
        command = [target.qemu[0], "-one-insn-per-tb", "-d", "exec,nochain", *target.qemu[1:], str(executable),
                   "--warmup", "0", "--repeat", str(repeat), *map(str, paths)]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        count, tail = 0, b""
        while chunk := proc.stderr.read(1 << 20):
            text = tail + chunk
            count += text.count(b"\nTrace")
            tail = text[-8:]
        if proc.wait() != 0:
            raise RuntimeError(f"{executable.name} under {command[0]} exited {proc.returncode}")
        return count


def per_run(folder: Path, feeds: list[np.ndarray]) -> int:
    """One run's instructions: 3 timed runs less 1, halved (the reading, writing and start-up cancel)."""
    import json

    report = json.loads((folder / "report.json").read_text())
    return (instructions(folder, report, feeds, 3) - instructions(folder, report, feeds, 1)) // 2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet8,ds_cnn_kws,mobilenet_v1_025_vww,fc_autoencoder")
    parser.add_argument("--targets", default="aarch64-dotprod,aarch64")
    args = parser.parse_args(argv)
    names, targets = args.models.split(","), args.targets.split(",")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-int8-isa-") as tmp:
        work = Path(tmp)
        for name in names:
            model = models.SUITE[name]()
            fp32, q = work / f"{name}.onnx", work / f"{name}.int8.onnx"
            int8.quantize(model, fp32, q)
            specs = measure.input_specs(model)
            feeds = [np.random.default_rng(0).standard_normal(s["shape"]).astype(np.float32) for s in specs]
            for target in targets:
                counts = {}
                for label, path in (("fp32", fp32), ("int8", q)):
                    folder, _ = build(path, BuildOptions(target=target, out_dir=work / f"{name}-{target}-{label}"))
                    counts[label] = per_run(folder, feeds)
                rows.append((name, target, counts["fp32"], counts["int8"]))
                print(f"{name} {target}: fp32 {counts['fp32']:,} int8 {counts['int8']:,} "
                      f"({counts['int8'] / counts['fp32']:.2f}x)", flush=True)
    lines = ["# int8 vs fp32 on the emulated Arm targets: instructions per run of the whole model", "",
             "Counted by qemu-user (`python -m benchmarks.int8_isa`; -one-insn-per-tb -d exec: one logged block per "
             "instruction; 3 runs less 1, halved). Not cycles: see the module's docstring. int8: the model quantized "
             "by benchmarks/int8.py (QDQ static, per-channel int8 weights, uint8 activations).", "",
             "| model | target | fp32 instructions | int8 instructions | int8 / fp32 |", "|---|---|---:|---:|---:|"]
    lines += [f"| {n} | {t} | {f:,} | {i:,} | {i / f:.2f} |" for n, t, f, i in rows]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "int8_isa.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
