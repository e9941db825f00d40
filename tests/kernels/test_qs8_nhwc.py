"""The channels-last qs8 kernels (qs8-packed's GEMM forms and NHWC driver, qs8-dwconv's forms) against their
oracles through qs8_nhwc_edges.c, bytes compared exactly: AVX2, AVX-512 and AVX-512 VNNI natively (where the CPU has
it), SIMD128 and relaxed SIMD in wasmtime, AArch64 NEON with and without sdot under qemu-user (the aarch64-dotprod
build has both), and the portable build (the references against qs8-gemm's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.kernels.simd_harness import kernel_sources, run_harness

HARNESS = Path(__file__).with_name("qs8_nhwc_edges.c")
GEMM_CASES = 3 * 6 * 5 * 7 * 2 + 2  # and two deep products
DWCONV_CASES = 3 * 5 * 7 * 2
IGEMM_CASES = 3 * 6 * 4 * 4 * 2
CONV_CASES = 6 * 2  # per driver form: the gathering one, then the indirect one per igemm form
ROWS_CASES = 6 * 2 * 2  # the kernel-row driver per igemm form


@pytest.mark.parametrize("target_name,gemms,igemms,dwconvs", [
    ("x86_64", 2, 1, 1), ("x86_64-avx512", 2, 1, 2), ("x86_64-avx512-vnni", 3, 2, 2), ("wasm32", 2, 1, 1),
    ("wasm32-relaxed", 3, 1, 1), ("aarch64-dotprod", 3, 1, 1), ("x86_64-baseline", 1, 1, 0)])
def test_forms_match_reference(target_name, gemms, igemms, dwconvs, tmp_path):
    output = run_harness(target_name, HARNESS, kernel_sources("qs8-gemm", "qs8-packed", "qs8-dwconv"), tmp_path)
    found = re.search(r"(\d+) of (\d+) cases differ", output)
    assert found and found[1] == "0", output
    # every form this target builds ran
    assert int(found[2]) == gemms * GEMM_CASES + igemms * (IGEMM_CASES + CONV_CASES + ROWS_CASES) + dwconvs * DWCONV_CASES + CONV_CASES, output
