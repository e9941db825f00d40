"""Differential testing: random valid ONNX graphs built and run with mlcc, compared with onnxruntime.

    python -m tests.fuzz.differential --seeds 0:1000 [-t host|wasm32] [-j 2] [-O 0..3] [--keep DIR]

Each seed gives one graph (tests/fuzz/graphs.py). Outcomes:
  ok               every output matches onnxruntime within RTOL/ATOL (|got - expected| <= ATOL + RTOL * |expected|)
  mismatch         an output differs in shape or value                      (a finding)
  build-error      mlcc refused the valid graph with an MlccError, e.g.
                   UnsupportedError                                          (a finding)
  crash            any other exception inside mlcc (a traceback)            (a finding)
  reference-error  onnxruntime refused the graph: a generator bug, not mlcc's
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
from tests.golden import build_and_run

RTOL = 1e-3
ATOL = 1e-4
FINDINGS = ("mismatch", "build-error", "crash")
STATUSES = ("ok", *FINDINGS, "reference-error")


@dataclass
class Outcome:
    seed: int
    status: str
    ops: str
    detail: str = ""
    seconds: float = 0.0


def run_seed(seed: int, target: str = "host", keep: str | None = None, opt_level: int = 2) -> Outcome:
    """Generate the graph of `seed`, run it on onnxruntime and on mlcc for `target`, and compare."""
    started = time.perf_counter()
    model, feeds = random_model(seed)
    outcome = Outcome(seed, "ok", describe(model))
    names = [o.name for o in model.graph.output]
    try:
        expected, _ = reference_outputs(model, feeds, names)
    except Exception as exc:
        outcome.status, outcome.detail = "reference-error", _one_line(exc)
    else:
        outcome.status, outcome.detail = _run_mlcc(model, feeds, names, expected, target, opt_level)
    outcome.seconds = time.perf_counter() - started
    if keep and outcome.status != "ok":
        _save(Path(keep), seed, model, feeds, outcome, target)
    return outcome


def _run_mlcc(model, feeds, names, expected, target, opt_level) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="mlcc-fuzz-") as tmp:
        try:
            got, _ = build_and_run(model, feeds, target, Path(tmp), opt_level=opt_level)
        except MlccError as exc:
            return "build-error", f"{type(exc).__name__}: {_one_line(exc)}"
        except Exception:
            return "crash", traceback.format_exc(limit=-4).strip().replace("\n", " | ")
    wrong = []
    for name in names:
        want = np.asarray(expected[name])
        if got[name].shape != want.shape:
            wrong.append(f"{name}: shape {got[name].shape} != {want.shape}")
            continue
        result = compare(got[name], want, RTOL, ATOL)
        if not result.ok:
            wrong.append(f"{name}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}")
    return ("mismatch", "; ".join(wrong)) if wrong else ("ok", "")


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
    parser.add_argument("-v", "--verbose", action="store_true", help="print every seed, not only failures")
    args = parser.parse_args(argv)
    seeds = _parse_seeds(args.seeds)
    os.environ.setdefault("MLCC_CACHE_DIR", str(Path(tempfile.gettempdir()) / "mlcc-fuzz-cache"))

    started = time.perf_counter()
    counts = dict.fromkeys(STATUSES, 0)
    failures: list[Outcome] = []
    jobs = [(seed, args.target, args.keep, args.opt_level) for seed in seeds]
    with ProcessPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        for outcome in pool.map(_worker, jobs, chunksize=1):
            counts[outcome.status] += 1
            if outcome.status != "ok":
                failures.append(outcome)
            if outcome.status != "ok" or args.verbose:
                print(f"seed {outcome.seed}: {outcome.status} [{outcome.ops}] {outcome.detail}", flush=True)

    elapsed = time.perf_counter() - started
    print(f"\n{len(seeds)} graphs on {args.target} at -O{args.opt_level} in {elapsed:.0f} s (rtol {RTOL:g}, atol {ATOL:g}): "
          + ", ".join(f"{counts[s]} {s}" for s in STATUSES))
    for status in STATUSES[1:]:
        seeds_with = [o.seed for o in failures if o.status == status]
        if seeds_with:
            print(f"  {status}: seeds {' '.join(map(str, seeds_with))}")
    return 1 if any(counts[s] for s in FINDINGS) else 0


if __name__ == "__main__":
    sys.exit(main())
