import os

import pytest

from tests.golden import TARGETS

# On these, every case of every per-op test runs; on any other test target (cross targets under qemu,
# wasm32 on another runner) one case per test function in tests/ops, and one per op a test function is
# parametrized over, unless --every-case.
EVERY_CASE_TARGETS = {"host", "wasm32"}


def pytest_addoption(parser):
    parser.addoption("--targets", default=",".join(TARGETS),
                     help="comma-separated test targets for the `target` fixture: NAME or NAME@RUNNER "
                          "(e.g. host,wasm32,aarch64,wasm32@node); default: %(default)s")
    parser.addoption("--every-case", action="store_true",
                     help="run every per-op case on every --targets entry, not one per test function")


def selected_targets(config) -> list[str]:
    return [t.strip() for t in config.getoption("--targets").split(",") if t.strip()]


def pytest_generate_tests(metafunc):
    if "target" in metafunc.fixturenames and not _parametrized_here(metafunc, "target"):
        metafunc.parametrize("target", selected_targets(metafunc.config), indirect=True)


def _parametrized_here(metafunc, name: str) -> bool:
    return any(name in m.args[0] if isinstance(m.args[0], (list, tuple)) else name in m.args[0].split(",")
               for m in metafunc.definition.iter_markers("parametrize"))


@pytest.fixture
def target(request):
    """The test target: each test taking it runs on every --targets entry (host natively, wasm32 in
    wasmtime by default; cross targets under qemu-user)."""
    return request.param


def pytest_collection_modifyitems(config, items):
    if config.getoption("--every-case"):
        return
    from mlcc.ops import all_ops

    op_types = {op_type for (_, op_type) in all_ops()}
    ops_dir = os.path.join(os.path.dirname(__file__), "ops")
    seen: dict[tuple[str, str], set[str]] = {}
    keep, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        target = params.get("target")
        if target is None or target in EVERY_CASE_TARGETS or not str(item.path).startswith(ops_dir):
            keep.append(item)
            continue
        key = (item.nodeid.split("[")[0], target)
        named_ops = {v for v in params.values() if isinstance(v, str) and v in op_types}
        new = key not in seen or named_ops - seen[key]
        (keep if new else dropped).append(item)
        seen.setdefault(key, set()).update(named_ops)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    # the object cache is shared across a run (that is its point) but kept apart from the user's
    os.environ.setdefault("MLCC_CACHE_DIR", str(tmp_path_factory.getbasetemp().parent / "mlcc-cache"))
