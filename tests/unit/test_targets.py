"""Target files are data: every one loads, names match files, `host` resolves here."""

import pytest

from mlcc import targets
from mlcc.errors import UsageError


def test_every_target_file_loads():
    found = targets.all_targets()
    assert {"x86_64", "x86_64-avx512", "wasm32", "wasm32-scalar"} <= set(found)
    for t in found.values():
        assert t.alignment == 64 and t.artifacts and t.runner


def test_host_resolves_to_a_target_this_machine_runs():
    host = targets.resolve("host")
    assert host.runner == "host"


def test_aliases_resolve():
    assert targets.resolve("x86_64-v4").name == "x86_64-avx512"


def test_unknown_target_lists_valid_ones():
    with pytest.raises(UsageError, match="valid targets: host"):
        targets.resolve("pdp11")
