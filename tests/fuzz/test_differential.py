"""A bounded CI budget of the differential fuzzer: random valid graphs, mlcc vs onnxruntime (rtol 1e-3, atol 1e-4).

Each seed is its own test so a failure names the seed; reproduce it with
`python -m tests.fuzz.differential --seeds N:N+1 -t TARGET --keep DIR`. Wider runs belong to that command.
"""

import pytest

from tests.fuzz.differential import ATOL, RTOL, run_seed

# A slice apart from the CLI's default 0:100, so CI and manual sweeps cover different graphs.
HOST_SEEDS = range(10_000, 10_100)
WASM_SEEDS = range(20_000, 20_030)


def _check(seed: int, target: str) -> None:
    outcome = run_seed(seed, target)
    assert outcome.status == "ok", (f"seed {seed} on {target}: {outcome.status} [{outcome.ops}] {outcome.detail} "
                                 f"(rtol {RTOL:g}, atol {ATOL:g})")


@pytest.mark.parametrize("seed", HOST_SEEDS)
def test_random_graph_host(seed):
    _check(seed, "host")


@pytest.mark.parametrize("seed", WASM_SEEDS)
def test_random_graph_wasm32(seed):
    _check(seed, "wasm32")
