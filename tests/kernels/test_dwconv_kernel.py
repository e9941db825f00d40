"""The f32-dwconv kernel (mlcc_f32_dwconv_nhwc__simd) against f32-conv's scalar oracle
(mlcc_f32_conv_depthwise_nhwc__scalar) through dwconv_edges.c, on every SIMD shim (AVX-512, AVX2 natively,
SIMD128 in wasmtime, NEON on AArch64 / Armv7 and RVV under qemu-user) and on the portable builds; Cortex-M4
(freestanding) is compiled warning-free only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.simd_harness import PORTABLE_TARGETS, SIMD_TARGETS, kernel_sources, run_harness

HARNESS = Path(__file__).with_name("dwconv_edges.c")


@pytest.mark.parametrize("target_name", SIMD_TARGETS + PORTABLE_TARGETS)
def test_kernel_matches_reference(target_name, tmp_path):
    sources = kernel_sources("f32-dwconv") if target_name == "cortex-m4" else kernel_sources("f32-dwconv", "f32-conv")
    output = run_harness(target_name, HARNESS, sources, tmp_path)
    assert output is None or output.strip().endswith("0 of 756 cases differ"), output
