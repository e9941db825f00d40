"""Print mlcc's pass rate on the ONNX backend node cases: `python -m tests.conformance [--target T] [-j N]`.

`--write-expected` rewrites expected_pass.txt with the cases that pass now (review the diff: a name that
disappears is a regression).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import time

from tests.conformance import suite


def _run(args: tuple[str, str]) -> tuple[str, suite.Outcome]:
    name, target = args
    return name, suite.run_case(suite.all_cases()[name], target)


def run_all(names: list[str], target: str, jobs: int) -> dict[str, suite.Outcome]:
    """Outcome per case. When a case kills a worker process (a crash in generated code), the cases that
    were in flight are rerun one per process, so the culprit is named and the others still count."""
    results: dict[str, suite.Outcome] = {}
    broken = _run_pool(names, target, jobs, results)
    for name in broken:
        if _run_pool([name], target, 1, results):
            results[name] = suite.Outcome(False, "crash: the process running it died (signal)")
    return {name: results[name] for name in names}


def _run_pool(names: list[str], target: str, jobs: int, results: dict[str, suite.Outcome]) -> list[str]:
    broken = []
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        futures = {pool.submit(_run, (name, target)): name for name in names}
        for future in concurrent.futures.as_completed(futures):
            try:
                results[futures[future]] = future.result()[1]
            except concurrent.futures.process.BrokenProcessPool:
                broken.append(futures[future])
    return broken


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--target", "-t", default="host")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--match", "-k", default="", help="only cases whose name contains this")
    parser.add_argument("--failures", action="store_true", help="list every failing case with its reason")
    parser.add_argument("--write-expected", action="store_true")
    args = parser.parse_args()

    os.environ.setdefault("MLCC_CACHE_DIR", os.path.expanduser("~/.cache/mlcc"))
    cases = {n: c for n, c in suite.applicable_cases().items() if args.match in n}
    started = time.perf_counter()
    results = run_all(list(cases), args.target, args.jobs)
    print(f"target {args.target}: {len(results)} cases in {time.perf_counter() - started:.0f} s")
    print(suite.summarize(results, cases))
    if args.failures:
        for name, outcome in sorted(results.items()):
            if not outcome.passed:
                print(f"FAIL {name}: {outcome.reason}")
    if args.write_expected:
        suite.write_expected({n for n, o in results.items() if o.passed})
    return 0


if __name__ == "__main__":
    sys.exit(main())
