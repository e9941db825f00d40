"""The scikit-learn sweep (benchmarks/sweep/sklearn_models.py): its CI subset, a handful of estimators and
pipelines through skl2onnx built for host (some for wasm32 too) and compared with onnxruntime; the whole
sweep behind -m slow (or `python -m benchmarks.sweep.sklearn_models`)."""

import pytest

pytest.importorskip("sklearn", reason="scripts/test.sh installs it (pip install -e '.[sklearn]')")
pytest.importorskip("skl2onnx", reason="scripts/test.sh installs it (pip install -e '.[sklearn]')")

from benchmarks.sweep import failures, sklearn_models as sweep  # noqa: E402


def _check(results):
    failed = failures(results)
    assert not failed, "\n".join(failed)


def test_sweep_ci_subset(tmp_path):
    cases = sweep.select(fast=True)
    assert len(cases) >= 5
    results = sweep.sweep(cases, ["host", "wasm32"], tmp_path)
    assert {r.target for r in results} == {"host", "wasm32"}
    _check(results)


@pytest.mark.slow
def test_sweep_full(tmp_path):
    results = sweep.sweep(sweep.select(), ["host", "wasm32"], tmp_path)
    _check([r for r in results if r.status not in ("not run", "export failed")])
