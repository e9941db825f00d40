"""The f32-pool channels-last kernels on the SIMD shim (mlcc_f32_pool_*_nhwc__simd) against their scalar
forms through pool_edges.c, bit for bit, on every SIMD shim (AVX-512, AVX2 natively, SIMD128 in wasmtime,
NEON on AArch64 / Armv7 and RVV under qemu-user) and on the portable builds; Cortex-M4 (freestanding) is
compiled warning-free only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.simd_harness import PORTABLE_TARGETS, SIMD_TARGETS, kernel_sources, run_harness

HARNESS = Path(__file__).with_name("pool_edges.c")


@pytest.mark.parametrize("target_name", SIMD_TARGETS + PORTABLE_TARGETS)
def test_kernels_match_scalar(target_name, tmp_path):
    output = run_harness(target_name, HARNESS, kernel_sources("f32-pool"), tmp_path)
    assert output is None or output.strip().endswith("0 of 774 cases differ"), output
