"""The f32-winograd transforms (mlcc_f32_winograd_{input,output}__simd) against their matrix oracles through
winograd_edges.c, on every SIMD shim (AVX-512, AVX2 natively, SIMD128 in wasmtime, NEON on AArch64 / Armv7
and RVV under qemu-user) and on the portable builds; Cortex-M4 (freestanding) is compiled warning-free only.
The whole convolution is checked against onnxruntime in tests/ops/test_conv_winograd.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kernels.simd_harness import PORTABLE_TARGETS, SIMD_TARGETS, kernel_sources, run_harness

HARNESS = Path(__file__).with_name("winograd_edges.c")


@pytest.mark.parametrize("target_name", SIMD_TARGETS + PORTABLE_TARGETS)
def test_transforms_match_reference(target_name, tmp_path):
    output = run_harness(target_name, HARNESS, kernel_sources("f32-winograd"), tmp_path)
    assert output is None or output.strip() == "0 of 253 cases differ", output
