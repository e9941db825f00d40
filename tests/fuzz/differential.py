"""Differential testing: random valid ONNX graphs built and run with mlcc, compared with onnxruntime.

    python -m tests.fuzz.differential --seeds 0:1000 [-t host|wasm32] [-j 2] [-O 0..2] [--keep DIR] [--quantized]

Each seed gives one graph (tests/fuzz/graphs.py; with --quantized the same kind of graph quantized by
onnxruntime.quantization in QDQ or QOperator form, tests/fuzz/quantized_graphs.py). Outcomes:
  ok               every output matches onnxruntime within RTOL/ATOL (|got - expected| <= ATOL + RTOL * |expected|);
                   a quantized graph: within one quantization step of onnxruntime with graph optimisation off
                   (the exact integer semantics), float outputs within tests/quantized/reference.py's tolerance
  mismatch         an output differs in shape or value                      (a finding)
  build-error      mlcc refused the valid graph with an MlccError, e.g.
                   UnsupportedError                                          (a finding)
  crash            any other exception inside mlcc (a traceback)            (a finding)
  reference-error  onnxruntime refused the graph (or could not quantize it): a generator bug, not mlcc's
  tie-amplified    a quantized graph's output is more than a step away, but every integer tensor computed from
                   bit-identical inputs is within one step: a rounding tie decided the other way (onnxruntime's
                   float arithmetic sits an ulp off an exact .5) and carried forward by later layers
A failing seed reproduces with `--seeds N:N+1`; --keep DIR saves its model (seedN.onnx), inputs (seedN.npz)
and what went wrong (seedN.txt). The exit status is 1 when there is any finding.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from mlcc.errors import MlccError
from mlcc.verify import compare, reference_outputs
from tests.fuzz.graphs import describe, random_model
from tests.fuzz.quantized_graphs import (
    QuantizerRefused,
    first_divergences,
    form_of,
    random_quantized_model,
    with_integer_outputs,
)
from tests.golden import build_and_run
from tests.quantized.reference import distances, reference as exact_reference

RTOL = 1e-3
ATOL = 1e-4
FINDINGS = ("mismatch", "build-error", "crash")
STATUSES = ("ok", *FINDINGS, "reference-error", "tie-amplified")


@dataclass
class Outcome:
    seed: int
    status: str
    ops: str
    detail: str = ""
    seconds: float = 0.0


def run_seed(seed: int, target: str = "host", keep: str | None = None, opt_level: int = 2,
             quantized: bool = False) -> Outcome:
    """Generate the graph of `seed`, run it on onnxruntime and on mlcc for `target`, and compare."""
    started = time.perf_counter()
    if quantized:
        try:
            model, feeds = random_quantized_model(seed)
        except QuantizerRefused as exc:
            return Outcome(seed, "reference-error", f"[{form_of(seed)}]", str(exc), time.perf_counter() - started)
    else:
        model, feeds = random_model(seed)
    outcome = Outcome(seed, "ok", describe(model))
    names = [o.name for o in model.graph.output]
    try:
        expected = exact_reference(model, feeds) if quantized else reference_outputs(model, feeds, names)[0]
    except Exception as exc:
        outcome.status, outcome.detail = "reference-error", _one_line(exc)
    else:
        compare_outputs = _within_a_step if quantized else _within_tolerance
        outcome.status, outcome.detail = _run_mlcc(model, feeds, expected, target, opt_level, compare_outputs)
        if quantized and outcome.status == "mismatch":
            outcome.status, outcome.detail = _localize(model, feeds, target, opt_level, outcome.detail)
    outcome.seconds = time.perf_counter() - started
    if keep and outcome.status != "ok":
        _save(Path(keep), seed, model, feeds, outcome, target)
    return outcome


def _run_mlcc(model, feeds, expected, target, opt_level, compare_outputs) -> tuple[str, str]:
    got, status, detail = _build_and_run(model, feeds, target, opt_level)
    if got is None:
        return status, detail
    wrong = compare_outputs(model, got, expected)
    return ("mismatch", "; ".join(wrong)) if wrong else ("ok", "")


def _build_and_run(model, feeds, target, opt_level) -> tuple[dict | None, str, str]:
    """(outputs, "ok", "") or (None, "build-error" or "crash", why)."""
    with tempfile.TemporaryDirectory(prefix="mlcc-fuzz-") as tmp:
        try:
            got, _ = build_and_run(model, feeds, target, Path(tmp), opt_level=opt_level)
        except MlccError as exc:
            return None, "build-error", f"{type(exc).__name__}: {_one_line(exc)}"
        except Exception:
            return None, "crash", traceback.format_exc(limit=-4).strip().replace("\n", " | ")
    return got, "ok", ""


def _localize(model, feeds, target, opt_level, detail: str) -> tuple[str, str]:
    """Tell a fault from a carried rounding tie: rebuild with every 8-bit tensor an output and look for one
    more than a step away from bit-identical inputs."""
    shown = with_integer_outputs(model, feeds)
    got, status, why = _build_and_run(shown, feeds, target, opt_level)
    if got is None:
        return status, f"{why} (with every 8-bit tensor an output)"
    faults = first_divergences(shown, got, exact_reference(shown, feeds))
    return ("mismatch", "; ".join(faults)) if faults else ("tie-amplified", detail)


def _within_tolerance(model, got: dict, expected: dict) -> list[str]:
    wrong = []
    for name in expected:
        want = np.asarray(expected[name])
        if got[name].shape != want.shape:
            wrong.append(f"{name}: shape {got[name].shape} != {want.shape}")
            continue
        result = compare(got[name], want, RTOL, ATOL)
        if not result.ok:
            wrong.append(f"{name}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}")
    return wrong


def _within_a_step(model, got: dict, expected: dict) -> list[str]:
    wrong = []
    for name in expected:
        if got[name].shape != expected[name].shape:
            wrong.append(f"{name}: shape {got[name].shape} != {expected[name].shape}")
    if wrong:
        return wrong
    for row in distances(model, got, expected):
        if row.steps is None and not row.within():
            wrong.append(f"{row.output}: max abs err {row.max_abs:.3g} over {row.float_bound:.3g}")
        elif row.steps is not None and not row.within(1.0):
            wrong.append(f"{row.output}: {row.steps:.2f} quantization steps away ({row.exact:.1%} bit-exact)")
    return wrong


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:400]


def _save(folder: Path, seed: int, model, feeds, outcome: Outcome, target: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / f"seed{seed}.onnx"))
    np.savez(folder / f"seed{seed}.npz", **feeds)
    (folder / f"seed{seed}.txt").write_text(f"seed {seed} on {target}: {outcome.status}\nops: {outcome.ops}\n{outcome.detail}\n")


def _parse_seeds(text: str) -> range:
    first, sep, last = text.partition(":")
    return range(int(first), int(last)) if sep else range(int(first), int(first) + 1)


def _worker(args):
    try:  # the summary says what failed; onnxruntime's own log lines would only repeat it
        import onnxruntime

        onnxruntime.set_default_logger_severity(4)
    except ImportError:
        pass
    return run_seed(*args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.differential", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0:100", help="START:STOP (STOP excluded) or one seed")
    parser.add_argument("-t", "--target", default="host")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("-O", dest="opt_level", type=int, default=2, choices=range(3), help="mlcc optimisation level")
    parser.add_argument("--keep", help="save failing models, inputs and reasons in this folder")
    parser.add_argument("--quantized", action="store_true", help="quantize each graph (QDQ or QOperator) first")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every seed, not only failures")
    args = parser.parse_args(argv)
    seeds = _parse_seeds(args.seeds)
    os.environ.setdefault("MLCC_CACHE_DIR", str(Path(tempfile.gettempdir()) / "mlcc-fuzz-cache"))

    started = time.perf_counter()
    counts = dict.fromkeys(STATUSES, 0)
    failures: list[Outcome] = []
    jobs = [(seed, args.target, args.keep, args.opt_level, args.quantized) for seed in seeds]
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        for outcome in pool.map(_worker, jobs, chunksize=1):
            counts[outcome.status] += 1
            if outcome.status != "ok":
                failures.append(outcome)
            if outcome.status != "ok" or args.verbose:
                print(f"seed {outcome.seed}: {outcome.status} [{outcome.ops}] {outcome.detail}", flush=True)

    elapsed = time.perf_counter() - started
    kind, bound = ("quantized graphs", "one quantization step") if args.quantized else ("graphs", f"rtol {RTOL:g}, atol {ATOL:g}")
    print(f"\n{len(seeds)} {kind} on {args.target} at -O{args.opt_level} in {elapsed:.0f} s ({bound}): "
          + ", ".join(f"{counts[s]} {s}" for s in STATUSES))
    for status in STATUSES[1:]:
        seeds_with = [o.seed for o in failures if o.status == status]
        if seeds_with:
            print(f"  {status}: seeds {' '.join(map(str, seeds_with))}")
    return 1 if any(counts[s] for s in FINDINGS) else 0


if __name__ == "__main__":
    sys.exit(main())
