"""qs8-quantize's vector forms against its reference through qs8_quantize_edges.c, bytes compared (AVX-512
natively where the CPU has it). Whole models through the kernel (an image input quantized channels-last):
tests/quantized (its convnet on host)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.kernels.simd_harness import kernel_sources, run_harness

HARNESS = Path(__file__).with_name("qs8_quantize_edges.c")
CASES = 3 * 2 * 3 * 3 * 6  # per vector form: scales, ranges, zero points, plane counts, pixel counts


def test_avx512_matches_reference(tmp_path):
    output = run_harness("x86_64-avx512", HARNESS, kernel_sources("qs8-quantize"), tmp_path)
    found = re.search(r"(\d+) of (\d+) cases differ", output)
    assert found and found[1] == "0", output
    assert int(found[2]) == CASES, output
