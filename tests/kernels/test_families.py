"""Every kernel family's harnesses, as its manifest lists them (runtime_c/kernels/<family>/manifest.toml,
[[test]] rows with a `harness`): the harness (tests/kernels/<harness>) built with the family's sources (and
those of `families`) for each of its targets, by default every SIMD shim (AVX-512, AVX2 natively, SIMD128 in
wasmtime, NEON on AArch64 / Armv7 and RVV under qemu-user) and the portable builds; Cortex-M4
(freestanding) is compiled warning-free only. Each harness compares the family's forms with its oracle
(__reference) and prints "<failures> of <cases> cases differ" last: that line must be the manifest's
`expect`, so a harness that silently checks fewer cases fails too."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc import kernels
from tests.kernels.simd_harness import PORTABLE_TARGETS, SIMD_TARGETS, kernel_sources, run_harness


def _cases():
    for family in kernels.families().values():
        for test in family.tests:
            if "harness" not in test:
                continue
            for target in test.get("targets", SIMD_TARGETS + PORTABLE_TARGETS):
                yield pytest.param(family.name, test, target, id=f"{family.name}-{Path(test['harness']).stem}-{target}")


@pytest.mark.parametrize("family,test,target_name", list(_cases()))
def test_family_matches_its_oracle(family, test, target_name, tmp_path):
    sources = kernel_sources(*test.get("families", [family]))
    output = run_harness(target_name, Path(__file__).with_name(test["harness"]), sources, tmp_path)
    assert output is None or output.strip().splitlines()[-1] == test["expect"], output
