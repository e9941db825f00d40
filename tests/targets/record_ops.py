"""pytest plugin: `-p tests.targets.record_ops --record-ops FILE` appends, for every model a golden test
builds, one JSON line {test, target, ops} (op types before and after the passes). tests/targets/op_coverage.py
reads it to tell which registered ops a run exercised on each target."""

from __future__ import annotations

import json

import pytest

import tests.golden as golden


def pytest_addoption(parser):
    parser.addoption("--record-ops", default=None, help="append the op types of every golden build to this file")


@pytest.fixture(autouse=True)
def _record_ops(request, monkeypatch):
    path = request.config.getoption("--record-ops")
    if path is None:
        yield
        return
    build = golden.build

    def recording_build(model_path, options):
        out_dir, report = build(model_path, options)
        line = {"test": request.node.nodeid, "target": report["target"],
                "ops": sorted(set(report["ops_before"]) | set(report["ops"]))}
        with open(path, "a") as f:  # one short write per line: safe across xdist workers
            f.write(json.dumps(line) + "\n")
        return out_dir, report

    monkeypatch.setattr(golden, "build", recording_build)
    yield  # monkeypatch restores golden.build
