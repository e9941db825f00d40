"""Whole models: the nine light zoo topologies, on every target, as shipped and with random weights.

Arena ceilings make memory regressions fail loudly: each is the arena measured when the test was
written plus 5%; lower them when the planner improves.
"""

import numpy as np
import onnx
import pytest

from mlcc.verify import compare, reference_outputs
from tests.golden import build_and_run, split_target
from tests.models import zoo

# Arena ceilings at -O2 (bytes, host and wasm32): measured when the memory planner learnt views, Concat ranges,
# in-place execution and the sweep under the lower bound, plus 5%.
ARENA_CEILING = {
    "bvlc_alexnet": 4_009_984,
    "densenet121": 7_586_816,
    "inception_v1": 6_205_440,
    "inception_v2": 6_205_440,
    "resnet50": 7_666_688,
    "shufflenet": 3_319_808,
    "squeezenet": 5_342_208,
    "vgg19": 29_171_712,
    "zfnet512": 9_581_568,
}
# Weights ceilings (bytes) per build target whose weights are the same on every machine: measured when packed
# weights were interned (one packed form per tensor and packing, stored once whoever reads it), plus 5%.
# resnet50 and inception_v2 since wasm32 prepares Winograd's weights at load: the shipped fills make each
# stage's 3x3 kernels equal, so a stride-2 one's im2col pack and the stride-1 ones' kernel (as the model has
# it, for the load-time transform) are two forms of one content, where all were one pack before.
WEIGHTS_CEILING = {
    "wasm32": {
        "bvlc_alexnet": 256_036_864,
        "densenet121": 16_228_352,
        "inception_v1": 25_427_968,
        "inception_v2": 31_639_232,
        "resnet50": 61_467_584,
        "shufflenet": 2_826_240,
        "squeezenet": 3_895_296,
        "vgg19": 538_959_872,
        "zfnet512": 356_540_416,
    },
}
ARENA_OVER_BOUND = 1.05  # the arena may exceed the lower bound of its schedule by this factor at most

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
    # the weights prepared at load time (wasm32's Winograd) lead the arena; the ceiling is the plan's
    planned = report["arena_bytes"] - report["optimized_for"]["prepared_at_load_bytes"]
    assert planned <= ARENA_CEILING[name], f"{name}: arena grew to {planned:,} B"
    assert report["arena_bytes"] <= ARENA_OVER_BOUND * report["arena_lower_bound_bytes"]
    assert "ConstantOfShape" not in report["ops"], "weights must fold into constants"
    ceiling = WEIGHTS_CEILING.get(split_target(target)[0], {}).get(name)
    assert ceiling is None or report["weights_bytes"] <= ceiling, f"{name}: weights grew to {report['weights_bytes']:,} B"


# VGG-19's layers are AlexNet's and ZFNet's kinds; its 548 MB of distinct random weights made it CI's
# costliest model build (67 s host + wasm32), so it runs as shipped only
@pytest.fixture(scope="module", params=[m for m in zoo.MODELS if m != "vgg19"])
def zoo_model_to_randomize(request):
    return request.param, onnx.load(zoo.model_path(request.param))


def test_zoo_random_weights(zoo_model_to_randomize, target, tmp_path):
    name, model = zoo_model_to_randomize
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
