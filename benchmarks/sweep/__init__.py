"""Model sweeps (sklearn_models, hf_models, vision_models): what they share — the result of one model on one
target, building and checking an export, the sweep loop, the table and the pass summary (their command
line's common options: cli.py)."""

from __future__ import annotations

import shutil
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np


@dataclass
class Result:
    name: str
    source: str  # the exporter or converter that made the ONNX file
    target: str
    ops: list[str] = field(default_factory=list)
    status: str = "not run"
    max_error: float | None = None
    largest_output: float | None = None  # the reference's largest |value|, where the tolerance scales with it
    build_seconds: float | None = None
    reason: str = ""


def one_line(exc: BaseException) -> str:
    """An exception as one table cell: mlcc's own errors as they read, others with their type."""
    from mlcc.errors import MlccError

    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = " ".join(lines[:2]) or type(exc).__name__
    return text[:300] if isinstance(exc, MlccError) else f"{type(exc).__name__}: {text}"[:300]


def check_builds(path: Path, results: list[Result], expected: dict[str, np.ndarray], work: Path,
                 run: Callable, rtol: float, atol: float, *, build_args: dict | None = None,
                 scale_atol: bool = False, keep: bool = True, note: str = "") -> list[Result]:
    """Builds the ONNX file at `path` for each result's target, runs it with `run(loaded)` (outputs by name)
    and compares each output with `expected`, filling in the results. `scale_atol` multiplies atol by the
    output's largest magnitude (at least 1); without `keep` each build folder goes once checked; `note` stays
    in the reason column."""
    from mlcc import runners
    from mlcc.pipeline import BuildOptions, build
    from mlcc.verify import compare

    for r in results:
        start = time.perf_counter()
        out_dir = work / f"{path.stem}-{r.target}"
        try:
            build(path, BuildOptions(target=r.target, out_dir=out_dir, **(build_args or {})))
            r.build_seconds = time.perf_counter() - start
            got = run(runners.load(out_dir))
        except Exception as exc:
            r.build_seconds = r.build_seconds or time.perf_counter() - start
            r.status, r.reason = "build failed", one_line(exc)
            continue
        finally:
            if not keep:
                shutil.rmtree(out_dir, ignore_errors=True)
        worst, largest, bad = 0.0, 0.0, []
        for name, want in expected.items():
            magnitude = float(np.max(np.abs(want))) if want.size else 0.0
            result = compare(got[name], want, rtol, atol * max(1.0, magnitude) if scale_atol else atol)
            worst, largest = max(worst, result.max_abs), max(largest, magnitude)
            if not result.ok:
                scale = f" (largest |output| {magnitude:.3g})" if scale_atol else ""
                bad.append(f"{name}: max abs err {result.max_abs:.3g}{scale}")
        r.max_error = worst
        r.largest_output = largest if scale_atol else None
        r.status, r.reason = ("mismatch", "; ".join(n for n in (*bad, note) if n)) if bad else ("pass", note)
    return results


def check_export(path: Path, feeds: dict[str, np.ndarray], results: list[Result], work: Path, rtol: float,
                 atol: float, *, scale_atol: bool = False, keep: bool = True) -> list[Result]:
    """check_builds for an exported model run on `feeds`, against onnxruntime's outputs; a named input
    dimension is built at the feeds' own size."""
    import onnx

    from mlcc.verify import reference_outputs

    model = onnx.load(str(path))
    ops = sorted({n.op_type for n in model.graph.node})
    names = [o.name for o in model.graph.output]
    dims = {d.dim_param: feeds[i.name].shape[axis] for i in model.graph.input if i.name in feeds
            for axis, d in enumerate(i.type.tensor_type.shape.dim) if d.dim_param}
    for r in results:
        r.ops = ops
    try:
        expected, _ = reference_outputs(model, feeds, names)
    except Exception as exc:
        for r in results:
            r.status, r.reason = "export failed", f"onnxruntime refuses the export: {one_line(exc)}"
        return results
    return check_builds(path, results, expected, work, lambda loaded: loaded.run(feeds), rtol, atol,
                        build_args=dict(dims=dims), scale_atol=scale_atol, keep=keep)


def sweep_cases(runs: list[tuple], run_case: Callable, targets: list[str], progress: Callable | None = None,
                name_width: int = 18) -> list[Result]:
    """run_case(case, source, wanted targets) for each (case, source) of `runs`; a bug in the sweep itself is
    reported as that run's "sweep error" and the sweep goes on. Cases not marked `wasm` run on host only."""
    results = []
    for case, source in runs:
        wanted = [t for t in targets if t == "host" or case.wasm]
        try:
            got = run_case(case, source, wanted)
        except Exception:
            got = [Result(case.name, source, t, status="sweep error",
                          reason=traceback.format_exc().strip().splitlines()[-1][:300]) for t in wanted]
        results += got
        if progress:
            for r in got:
                progress(f"{r.name:{name_width}} {r.source:7} {r.target:7} {r.status:13} {r.reason[:100]}")
    return results


def table(results: list[Result], source: str = "exporter", ops_listed: bool = False) -> str:
    """The Markdown table of a sweep: a "max |output|" column where the tolerance scaled with it, and the
    op types listed or counted."""
    largest = any(r.largest_output is not None for r in results)
    head = ["model", source, "target", "ops" if ops_listed else "op types", "status", "max error",
            *(["max \\|output\\|"] if largest else []), "build s", "failure reason or note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [r.name, r.source, r.target, ", ".join(r.ops) if ops_listed else str(len(r.ops) or ""), r.status,
                 "" if r.max_error is None else f"{r.max_error:.2g}",
                 *(["" if r.largest_output is None else f"{r.largest_output:.2g}"] if largest else []),
                 "" if r.build_seconds is None else f"{r.build_seconds:.1f}", r.reason.replace("|", "/")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def versions(packages: tuple[str, ...]) -> str:
    from importlib import metadata

    found = []
    for package in packages:
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} absent")
    return ", ".join(found)


def select_cases(cases: list, fast: bool = False, only: list[str] | None = None) -> list:
    """The cases named in `only`, else the fast ones, else all; an unknown name stops the sweep."""
    if only:
        known = {c.name for c in cases}
        unknown = sorted(set(only) - known)
        if unknown:
            raise SystemExit(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(sorted(known))}")
        return [c for c in cases if c.name in only]
    return [c for c in cases if c.fast] if fast else cases


def pass_summary(results: list, counted_as: str) -> str:
    """'P/N pass (per target) of COUNTED_AS; S not run or not exported'."""
    counted = [r for r in results if r.status not in ("not run", "export failed")]
    passed = sum(r.status == "pass" for r in counted)
    per_target: dict[str, list[int]] = {}
    for r in counted:
        per_target.setdefault(r.target, [0, 0])
        per_target[r.target][0] += r.status == "pass"
        per_target[r.target][1] += 1
    parts = ", ".join(f"{t} {p}/{n}" for t, (p, n) in per_target.items())
    skipped = len(results) - len(counted)
    return f"{passed}/{len(counted)} pass ({parts}) of {counted_as}; {skipped} not run or not exported"


def failures(results: list[Result]) -> list[str]:
    """A line for each result that did not pass (what the sweeps' tests report)."""
    return [f"{r.name} ({r.source}) on {r.target}: {r.status}: {r.reason}" for r in results if r.status != "pass"]
