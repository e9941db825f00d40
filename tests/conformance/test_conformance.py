"""The ONNX backend node cases (tests/conformance/suite.py) as tests.

Every applicable case runs on host; on wasm32 one expected-passing case per op runs by default and all of
them with `-m conformance_full`. A case listed in expected_pass.txt must pass (a failure is a regression); a
case not listed is an expected failure carrying its reason, and one that now passes is reported at the end
of the run so it can be added to the list.
"""

import pytest

from tests.conformance import suite

CASES = suite.applicable_cases()
EXPECTED = suite.read_expected()


def _one_per_op() -> list[str]:
    chosen = {}
    for name in sorted(EXPECTED & set(CASES)):
        chosen.setdefault(suite.tested_op(name, CASES[name]), name)
    return sorted(chosen.values())


def _check(name: str, target: str, record_property) -> None:
    outcome = suite.run_case(CASES[name], target)
    if name in EXPECTED:
        assert outcome.passed, f"{name} on {target} regressed: {outcome.reason}"
    elif outcome.passed:
        record_property("newly_passing", f"{name} ({target})")
    else:
        pytest.xfail(outcome.reason)


def test_expected_list_names_only_applicable_cases():
    assert not EXPECTED - set(CASES), f"not applicable or unknown: {sorted(EXPECTED - set(CASES))[:10]}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_host(name, record_property):
    _check(name, "host", record_property)


@pytest.mark.parametrize("name", _one_per_op())
def test_wasm32_one_per_op(name, record_property):
    _check(name, "wasm32", record_property)


@pytest.mark.conformance_full
@pytest.mark.parametrize("name", sorted(CASES))
def test_wasm32(name, record_property):
    _check(name, "wasm32", record_property)
