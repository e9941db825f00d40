"""qs8-packed's dequantizing forms (mlcc_qs8_packed_gemm_f32 / _s32, for dynamically quantized products) against
a direct computation through qs8_dequant_edges.c, values compared exactly: AVX2 and AVX-512 VNNI natively (where
the CPU has it), SIMD128 in wasmtime, NEON with and without sdot under qemu-user (the aarch64-dotprod build has
both; Armv7's tiles are 2 rows). Each build checks the reference too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels.simd_harness import kernel_sources, run_harness

HARNESS = Path(__file__).with_name("qs8_dequant_edges.c")
CASES = 2 * 3 * 8 * 5 * 7 * 2  # per form: f32 and s32, fills, m, n, k, row signedness


@pytest.mark.parametrize("target_name,forms", [("x86_64", 2), ("x86_64-avx512-vnni", 3), ("wasm32", 2),
                                               ("aarch64-dotprod", 3), ("armv7", 2)])
def test_forms_match_reference(target_name, forms, tmp_path):
    output = run_harness(target_name, HARNESS, kernel_sources("qs8-gemm", "qs8-packed"), tmp_path)
    found = re.search(r"(\d+) of (\d+) cases differ", output)
    assert found and found[1] == "0", output
    assert int(found[2]) == forms * CASES, output  # every form this target builds ran
