"""Which registered ops a golden-test run exercised, per target: reads the lines of
`-p tests.targets.record_ops --record-ops FILE` and, with --junit, counts only builds of tests that passed.

    python -m tests.targets.op_coverage ops.jsonl --junit results.xml [--junit rerun.xml]
"""

from __future__ import annotations

import argparse
import json
import xml.etree.ElementTree as ET
from collections import defaultdict

from mlcc import ops


def junit_outcomes(path: str) -> dict[str, str]:
    """nodeid-like key (module.path::[Class::]name) -> passed | failed | skipped."""
    outcomes = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = {"failure": "failed", "error": "failed"}.get(kind, kind)
    return outcomes


def junit_key(nodeid: str) -> str:
    path, *rest = nodeid.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return ".".join([module, *rest[:-1]]) + "::" + rest[-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", help="the --record-ops file (concatenate several for reruns)")
    parser.add_argument("--junit", action="append", default=[], help="repeatable: a later file's outcome wins (reruns)")
    args = parser.parse_args(argv)
    outcomes = {}
    for path in args.junit:
        outcomes.update(junit_outcomes(path))
    covered: dict[str, set[str]] = defaultdict(set)
    tests: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    with open(args.record) as f:
        for line in f:
            entry = json.loads(line)
            outcome = outcomes.get(junit_key(entry["test"]), "passed" if not outcomes else "unknown")
            for other in tests[entry["target"]].values():
                other.discard(entry["test"])
            tests[entry["target"]][outcome].add(entry["test"])
            if outcome == "passed":
                covered[entry["target"]].update(entry["ops"])
    registered = {op_type for (_, op_type) in ops.all_ops()}
    for target in sorted(tests):
        counts = ", ".join(f"{len(v)} {k}" for k, v in sorted(tests[target].items()))
        missing = sorted(registered - covered[target])
        print(f"{target}: tests {counts}; {len(registered & covered[target])} of {len(registered)} registered ops "
              f"run by passing tests")
        print(f"  not run: {' '.join(missing)}")


if __name__ == "__main__":
    main()
