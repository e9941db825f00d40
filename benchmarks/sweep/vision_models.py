"""The vision sweep: torchvision architectures (classification, segmentation, detection backbones, video) and
timm models at random init and small inputs, exported by torch.onnx's legacy (TorchScript) and dynamo exporters,
built by mlcc for each target and compared with onnxruntime on the same input.

    python -m benchmarks.sweep.vision_models                      # every model, both exporters, host + wasm32 subset
    python -m benchmarks.sweep.vision_models --only resnet18,timm_lcnet_050 --exporters legacy --targets host
    python -m benchmarks.sweep.vision_models --markdown benchmarks/results/vision_sweep.md

PyPI's torchvision is a CUDA build that does not import beside mlcc's CPU torch 2.13.0 ('operator torchvision::nms
does not exist'), so the exports run in a separate venv, .cache/vision-export-venv (git-ignored, made on first use:
`pip install torch==2.14.1 torchvision==0.29.1`, which pip on Python 3.11 takes from this machine's disk, a CUDA
build of about 5.5 GB that runs on the CPU; then timm, onnx and onnxscript from PyPI). The export runs there in a
subprocess (benchmarks/sweep/vision_export.py) and caches the .onnx files in .cache/vision-sweep/; everything after
the export (onnxruntime, mlcc) runs here. mlcc's own venv is never touched.

Outputs match within rtol 1e-3 and an atol of 1e-4 times the output's largest magnitude (at least 1e-4):
random-init deep nets grow activations, and onnxruntime and mlcc sum in different orders.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.sweep import (
    Result,
    check_export as sweep_check_export,
    cli,
    pass_summary,
    select_cases,
    sweep_cases,
    table,
    versions,
)
from benchmarks.sweep.vision_export import ALL_EXPORTERS, CASES, EXPORTERS, Case

RTOL, ATOL = 1e-3, 1e-4
ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".cache" / "vision-export-venv"
EXPORTS = ROOT / ".cache" / "vision-sweep"
VENV_PACKAGES = (["torch==2.14.1", "torchvision==0.29.1"], ["timm", "onnx", "onnxscript"])


def _venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_venv(venv: Path = VENV, log=print) -> Path:
    """The export venv, made on first use (never mlcc's own venv)."""
    python = _venv_python(venv)
    ready = venv / ".mlcc-export-ready"
    if ready.exists():
        return python
    base = getattr(sys, "_base_executable", None) or sys.executable  # the Python this venv was made from
    log(f"making the export venv {venv} (torch 2.14.1 + torchvision 0.29.1 from this machine's disk, ~5.5 GB)")
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    for packages in VENV_PACKAGES:  # torch first: timm must not pull a different torch
        subprocess.run([str(python), "-m", "pip", "install", "-q", *packages], check=True)
    ready.write_text("")
    return python


def export_all(cases: list[Case], exporters: list[str], exports: Path = EXPORTS, venv: Path = VENV,
               force: bool = False) -> None:
    """Runs vision_export in the export venv; it skips what its cache already holds."""
    python = ensure_venv(venv, log=lambda line: print(line, file=sys.stderr, flush=True))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("VIRTUAL_ENV", None)
    command = [str(python), "-m", "benchmarks.sweep.vision_export", "--out", str(exports),
               "--only", ",".join(c.name for c in cases), "--exporters", ",".join(exporters)]
    subprocess.run(command + (["--force"] if force else []), check=True, env=env, cwd=ROOT)


def run_case(case: Case, exporter: str, targets: list[str], exports: Path, work: Path,
             keep: bool = True) -> list[Result]:
    """Builds one cached export for each target, runs it, compares with onnxruntime; one Result per target."""
    import json

    results = [Result(case.name, exporter, t) for t in targets]
    meta_path = exports / f"{case.name}-{exporter}.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    if meta.get("key") != case.key:
        for r in results:
            r.reason = "not exported"
        return results
    if meta["status"] != "exported":
        for r in results:
            r.status, r.reason = "export failed", meta["reason"]
        return results
    feeds = {"input": np.load(exports / f"{case.name}.npz")["input"]}
    return check_export(exports / f"{case.name}-{exporter}.onnx", feeds, results, work, keep)


def check_export(path: Path, feeds: dict[str, np.ndarray], results: list[Result], work: Path,
                 keep: bool = True) -> list[Result]:
    """Builds the ONNX file at `path` for each result's target, runs it on `feeds` and compares with
    onnxruntime (atol scaled by each output's largest magnitude), filling in the results; without `keep` each
    build folder goes once checked (the whole sweep's builds take about 10 GB)."""
    return sweep_check_export(path, feeds, results, work, RTOL, ATOL, scale_atol=True, keep=keep)


def cases_table(cases: list[Case]) -> str:
    lines = ["| model | source | kind | input | how it differs from the published model |", "|---|---|---|---|---|"]
    for c in cases:
        lines.append(f"| {c.name} | {c.source} | {c.kind} | {'x'.join(map(str, c.shape))} | {c.note} |")
    return "\n".join(lines)


def summary(results: list[Result]) -> str:
    return pass_summary(results, "the exports")


def select(only: list[str] | None = None) -> list[Case]:
    return select_cases(CASES, False, only)


def sweep(cases: list[Case], exporters: list[str], targets: list[str], work: Path, exports: Path = EXPORTS,
          progress=None, keep: bool = True) -> list[Result]:
    return sweep_cases([(c, e) for c in cases for e in exporters],
                       lambda case, exporter, wanted: run_case(case, exporter, wanted, exports, work, keep),
                       targets, progress, name_width=28)


def _export_versions(exports: Path, cases: list[Case], exporters: list[str]) -> str:
    import json

    for case in cases:
        for exporter in exporters:
            meta = exports / f"{case.name}-{exporter}.json"
            if meta.exists():
                return json.loads(meta.read_text()).get("versions", "")
    return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sweep.vision_models", description=__doc__.split("\n\n")[0])
    cli.add_target_arguments(p, EXPORTERS, ALL_EXPORTERS)
    cli.add_case_arguments(p, "builds", fast=False)
    p.add_argument("--exports", type=Path, default=EXPORTS, help=f"the export cache [{EXPORTS.relative_to(ROOT)}]")
    p.add_argument("--venv", type=Path, default=VENV, help=f"the export venv [{VENV.relative_to(ROOT)}]")
    p.add_argument("--reexport", action="store_true", help="export again even where the cache is current")
    p.add_argument("--no-export", action="store_true", help="use the cache only (no export venv needed)")
    args = p.parse_args(argv)
    cases = select(cli.case_names(args.only))
    exporters = cli.exporter_names(args.exporters, ALL_EXPORTERS)
    if not args.no_export:
        export_all(cases, exporters, args.exports, args.venv, args.reexport)
    with cli.work_folder(args.work) as work:
        results = sweep(cases, exporters, cli.names(args.targets), work, args.exports,
                        progress=lambda line: print(line, file=sys.stderr, flush=True), keep=args.work is not None)
    text = (f"{table(results)}\n\n{summary(results)}\n\nExported with {_export_versions(args.exports, cases, exporters)}"
            f" (a separate venv); checked with {versions(('onnxruntime', 'onnx'))}\n")
    command = " ".join(["python -m benchmarks.sweep.vision_models", *(argv if argv is not None else sys.argv[1:])])
    return cli.finish(results, text, args.markdown, "torchvision and timm sweep", command,
                      f"\n## The models\n\n{cases_table(cases)}\n")


if __name__ == "__main__":
    sys.exit(main())
