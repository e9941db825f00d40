import os

import pytest

from tests.golden import TARGETS


@pytest.fixture(params=TARGETS)
def target(request):
    """Every per-op golden test runs on each target we claim (host natively, wasm32 in wasmtime)."""
    return request.param


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    # the object cache is shared across a run (that is its point) but kept apart from the user's
    os.environ.setdefault("MLCC_CACHE_DIR", str(tmp_path_factory.getbasetemp().parent / "mlcc-cache"))
