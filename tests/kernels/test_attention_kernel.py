"""The f32-attention kernel against its scalar oracle (mlcc_f32_attention__reference) through
attention_edges.c, built with the kernels' warning flags for the host (natively, with the GEMM variant the
host selects) and for wasm32 (in wasmtime): key counts around the tile width, blocks of queries, masks of
every form, causal, rows masked throughout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mlcc import paths
from mlcc.ops._gemm import tile_for
from mlcc.targets import host_target, resolve
from mlcc.toolchain import WARNINGS, target_flags
from tests.kernels.test_gemm_variants import _run_wasi

HARNESS = Path(__file__).with_name("attention_edges.c")


@pytest.mark.parametrize("target_name", ["host", "wasm32"])
def test_kernel_matches_reference(target_name, tmp_path):
    target = host_target() if target_name == "host" else resolve(target_name)
    kernels = paths.runtime_dir() / "kernels"
    exe = tmp_path / ("harness.wasm" if target.is_wasm else "harness")
    sources = [*sorted((kernels / "f32-attention").glob("*.c")), *sorted((kernels / "f32-gemm").glob("*.c"))]
    flags = [f for f in target_flags(target) if not f.startswith("-mexec-model")]  # a command with _start
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2",
                            "-fno-math-errno", *WARNINGS, f"-I{paths.runtime_dir() / 'include'}",
                            f"-DVARIANT={tile_for(target).config}", str(HARNESS), *map(str, sources),
                            "-o", str(exe), "-lm"], capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    if target.is_wasm:
        code, output = _run_wasi(exe)
    else:
        run = subprocess.run([str(exe)], capture_output=True, text=True)
        code, output = run.returncode, run.stdout
    assert code == 0, output
    assert output.strip().endswith("0 of 61 cases differ"), output
