"""Every f32-gemm variant of runtime_c/kernels/f32-gemm/manifest.toml against the scalar oracle
(mlcc_f32_gemm__reference) at its tile edges, on a target that selects it (targets/*.toml): gemm_variants.c,
built with the kernels' warning flags by Zig's clang for that target, runs natively (AVX2, AVX-512, scalar),
under qemu-user (NEON on AArch64 and Armv7, RVV at the target's VLEN) or in wasmtime (SIMD128, scalar). A
variant is skipped only when this machine can run none of its targets, and the skip says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlcc.ops._gemm import Tile, tile_for, variants
from mlcc.targets import Target, all_targets, host_target
from tests.kernels.simd_harness import kernel_sources, run_harness, runs_here

HARNESS = Path(__file__).with_name("gemm_variants.c")
# product widths that make tile_for pick each variant somewhere
PROBE_N = (8, 16, 64)


def _target_for(variant: Tile) -> Target:
    """A target this machine runs that selects the variant for some product (a portable one no target
    selects runs on the host target); skips, saying why, when there is none."""
    users = [t for t in all_targets().values()
             if t.libc and any(tile_for(t, n) == variant for n in (None, *PROBE_N))]
    if not users and not variant.features:
        users = [host_target()]
    runnable = [t for t in users if runs_here(t)]
    if not runnable:
        pytest.skip(f"{variant.name}: none of {', '.join(t.name for t in users) or 'no target'} runs here "
                    "(CPU features, or qemu-user missing: apt-get install qemu-user)")
    return runnable[0]


@pytest.mark.parametrize("variant", variants(), ids=lambda v: v.name)
def test_variant_matches_reference(variant, tmp_path):
    target = _target_for(variant)
    output = run_harness(target, HARNESS, kernel_sources("f32-gemm"), tmp_path, (f"VARIANT=mlcc_f32_gemm_config_{variant.name}",))
    assert ", 0 failures" in output, f"{target.name}: {output}"
