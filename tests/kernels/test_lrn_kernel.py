"""The f32-lrn kernels on the SIMD shim (mlcc_f32_lrn_*__simd) against their scalar forms through
lrn_edges.c, bit for bit (Armv7 NEON within 6 ulp: fused multiply-adds against VFP's unfused ones, and a
reciprocal for division), on every SIMD shim (AVX-512, AVX2 natively, SIMD128 in wasmtime, NEON on AArch64 /
Armv7 and RVV under qemu-user) and on the portable builds; Cortex-M4 (freestanding) is compiled
warning-free only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.simd_harness import PORTABLE_TARGETS, SIMD_TARGETS, kernel_sources, run_harness

HARNESS = Path(__file__).with_name("lrn_edges.c")


@pytest.mark.parametrize("target_name", SIMD_TARGETS + PORTABLE_TARGETS)
def test_kernels_match_scalar(target_name, tmp_path):
    output = run_harness(target_name, HARNESS, kernel_sources("f32-lrn"), tmp_path)
    assert output is None or output.strip().endswith("0 of 440 cases differ"), output
