"""Whole models: the nine light zoo topologies, on every target, as shipped and with random weights.

Arena ceilings make memory regressions fail loudly: each is the arena measured when the test was
written plus 5%; lower them when the planner improves.
"""

import numpy as np
import onnx
import pytest

from mlcc.verify import compare, reference_outputs
from tests.golden import build_and_run
from tests.models import zoo

# Random weights: logits are compared with a tolerance relative to their spread; float32 sums over
# up to 25088-long dot products in a different order than onnxruntime's differ by about 1e-5 relative.
RANDOM_RTOL = 1e-3
RANDOM_ATOL_OF_SCALE = 1e-4


@pytest.fixture(scope="module", params=zoo.MODELS)
def zoo_model(request):
    return request.param, onnx.load(zoo.model_path(request.param))


def test_zoo_as_shipped(zoo_model, target, tmp_path):
    name, model = zoo_model
    feeds = zoo.shipped_input(model)
    got, report = build_and_run(model, feeds, target, tmp_path)
    for out, expected in zoo.shipped_expected(name, model).items():
        result = compare(got[out], expected, zoo.SHIPPED_RTOL.get(name, 1e-3), zoo.SHIPPED_ATOL)
        assert result.ok, f"{name} {out}: max abs {result.max_abs:.3g}, max rel {result.max_rel:.3g}"
    assert report["arena_bytes"] < report["intermediates_bytes"]
    assert "ConstantOfShape" not in report["ops"], "weights must fold into constants"


def test_zoo_random_weights(zoo_model, target, tmp_path):
    name, model = zoo_model
    randomized, names = zoo.with_random_weights(model, seed=7)
    feeds = {k: np.random.default_rng(3).random(v.shape, dtype=np.float32) for k, v in zoo.shipped_input(model).items()}
    got, _ = build_and_run(randomized, feeds, target, tmp_path)
    expected, _ = reference_outputs(randomized, feeds, names)
    for out in names:
        ref = expected[out]
        assert np.all(np.isfinite(ref)), f"{name}: reference {out} not finite; rescale the random weights"
        scale = float(np.max(np.abs(ref)))
        result = compare(got[out], ref, RANDOM_RTOL, RANDOM_ATOL_OF_SCALE * scale)
        assert result.ok, f"{name} {out}: max abs {result.max_abs:.3g} (scale {scale:.3g}), max rel {result.max_rel:.3g}"
    if len(names) > 1:  # the logits must not be saturated into a one-hot answer: they must carry signal
        logits = expected[names[0]]
        assert np.std(logits) > 1e-3, f"{name}: logits nearly constant"
