"""The qs8-gemm variants (and the channel-major ones against mlcc_qs8_gemm_nchw__reference) against
mlcc_qs8_gemm__reference through qs8_gemm_edges.c (bytes compared exactly): AVX2 and AVX-512 VNNI natively
(where the CPU has it), SIMD128 in wasmtime, NEON (smull/sadalp on AArch64 and Armv7, sdot on
aarch64-dotprod) and RVV under qemu-user, Cortex-M4 DSP (SMLAD) and Cortex-M55 Helium
(VMLADAVA) on their emulated boards under qemu-system-arm; the portable builds check the harness runs with the reference alone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlcc.targets import resolve
from tests.kernels.simd_harness import kernel_sources, run_board_harness, run_harness

HARNESS = Path(__file__).with_name("qs8_gemm_edges.c")


@pytest.mark.parametrize("target_name,variants,nchw_variants", [("x86_64", 1, 1), ("x86_64-avx512", 1, 1),
                                                                ("x86_64-avx512-vnni", 1, 2),
                                                                ("wasm32", 1, 1), ("wasm32-relaxed", 2, 1), ("x86_64-baseline", 0, 0),
                                                                ("aarch64", 1, 1), ("aarch64-dotprod", 2, 1),
                                                                ("armv7", 1, 1), ("riscv64", 1, 0),
                                                                ("riscv64-scalar", 0, 0), ("cortex-m4", 1, 0),
                                                                ("cortex-m55", 2, 0)])
def test_variants_match_reference(target_name, variants, nchw_variants, tmp_path):
    run = run_board_harness if resolve(target_name).board else run_harness
    output = run(target_name, HARNESS, kernel_sources("qs8-gemm"), tmp_path)
    found = re.search(r"(\d+) of (\d+) cases differ", output)
    assert found and found[1] == "0", output
    # every variant this target builds ran
    assert int(found[2]) == variants * 4 * 7 * 6 * 7 * 2 * 2 + nchw_variants * 4 * 5 * 6 * 7 * 2, output
