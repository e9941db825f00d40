"""The f32-attention kernel against its scalar oracle (mlcc_f32_attention__reference) through
attention_edges.c, built with the kernels' warning flags for the host (natively, with the GEMM variant the
host selects) and for wasm32 (in wasmtime): key counts around the tile width, blocks of queries, masks of
every form, causal, rows masked throughout."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc.ops._gemm import tile_for
from mlcc.targets import resolve
from tests.kernels.simd_harness import kernel_sources, run_harness

HARNESS = Path(__file__).with_name("attention_edges.c")


@pytest.mark.parametrize("target_name", ["host", "wasm32"])
def test_kernel_matches_reference(target_name, tmp_path):
    target = resolve(target_name)
    output = run_harness(target, HARNESS, kernel_sources("f32-attention", "f32-gemm"), tmp_path,
                         (f"VARIANT={tile_for(target).config}",))
    assert output.strip().endswith("0 of 61 cases differ"), output
