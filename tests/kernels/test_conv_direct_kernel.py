"""f32-conv's direct channels-last convolution (mlcc_f32_conv_direct_nhwc__simd and its __scalar form)
against a naive convolution through conv_direct_edges.c, on every SIMD shim (AVX-512, AVX2 natively,
SIMD128 in wasmtime, NEON on AArch64 / Armv7 and RVV under qemu-user) and on the portable builds;
Cortex-M4 (freestanding) is compiled warning-free only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.simd_harness import PORTABLE_TARGETS, SIMD_TARGETS, kernel_sources, run_harness

HARNESS = Path(__file__).with_name("conv_direct_edges.c")


@pytest.mark.parametrize("target_name", SIMD_TARGETS + PORTABLE_TARGETS)
def test_kernel_matches_naive(target_name, tmp_path):
    output = run_harness(target_name, HARNESS, kernel_sources("f32-conv"), tmp_path)
    assert output is None or output.strip().endswith("0 of 4680 cases differ"), output
