"""The Hugging Face sweep (benchmarks/sweep/hf_models.py): its CI subset, two tiny transformers (BERT with a
padding mask, GPT-2 without cache) at random init, exported by torch.onnx's legacy exporter, built for host (BERT
for wasm32 too) and compared with onnxruntime; the whole sweep (24 architectures, both exporters) behind -m slow (or
`python -m benchmarks.sweep.hf_models`)."""

import pytest

pytest.importorskip("torch", reason="scripts/test.sh installs it (pip install -e '.[hf]')")
pytest.importorskip("transformers", reason="scripts/test.sh installs it (pip install -e '.[hf]')")

from benchmarks.sweep import failures, hf_models as sweep  # noqa: E402


def _check(results):
    failed = failures(results)
    assert not failed, "\n".join(failed)


def test_sweep_ci_subset(tmp_path):
    cases = sweep.select(fast=True)
    assert {c.name for c in cases} == {"bert", "gpt2"}
    results = sweep.sweep(cases, ["legacy"], ["host", "wasm32"], tmp_path)
    assert len(results) == 3 and {r.target for r in results} == {"host", "wasm32"}
    _check(results)


@pytest.mark.slow
def test_sweep_full(tmp_path):
    results = sweep.sweep(sweep.select(), list(sweep.EXPORTERS), ["host", "wasm32"], tmp_path)
    _check([r for r in results if r.status not in ("not run", "export failed")])
