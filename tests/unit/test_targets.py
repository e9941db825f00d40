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


CROSS = {"aarch64": 16, "aarch64-dotprod": 16, "armv7": 16, "riscv64": 32, "riscv64-scalar": 4}


@pytest.mark.parametrize("name,vector_bytes", CROSS.items())
def test_linux_cross_targets_build_a_runner_run_under_qemu(name, vector_bytes):
    t = targets.resolve(name)
    assert t.triple.endswith(("-linux-musl", "-linux-musleabihf")) and t.libc
    assert {"static_library", "executable"} <= set(t.artifacts)
    assert t.runner == "qemu" and t.qemu[0].startswith("qemu-")
    assert t.vector_bytes == vector_bytes


def test_cross_aliases_resolve():
    assert targets.resolve("arm64").name == "aarch64"
    assert targets.resolve("armv7-neon").name == "armv7"
    assert targets.resolve("rv64gcv").name == "riscv64"
    assert targets.resolve("rv64gc").name == "riscv64-scalar"


def test_test_target_strings_name_a_runner():
    from tests.golden import split_target

    assert split_target("wasm32@node") == ("wasm32", "node")
    assert split_target("aarch64") == ("aarch64", None)
