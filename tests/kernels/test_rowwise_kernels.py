"""The SIMD forms of f32-norm's layer normalisation, of f32-softmax and of the f32-vmath array functions
against their scalar references (rowwise_edges.c) on every ISA this machine runs: natively (AVX-512, AVX2, scalar), in wasmtime (SIMD128,
scalar) and under qemu-user (NEON on AArch64 and Armv7, RVV)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mlcc import paths
from mlcc.targets import resolve
from mlcc.toolchain import WARNINGS, target_flags
from tests.kernels.test_gemm_variants import _run_wasi, _runs_here

HARNESS = Path(__file__).with_name("rowwise_edges.c")
TARGETS = ["x86_64-avx512", "x86_64", "x86_64-baseline", "wasm32", "wasm32-scalar", "aarch64", "armv7", "riscv64"]


@pytest.mark.parametrize("target_name", TARGETS)
def test_matches_scalar(target_name, tmp_path):
    target = resolve(target_name)
    if not _runs_here(target):
        pytest.skip(f"{target_name} does not run here (CPU features, or qemu-user missing)")
    kernels = paths.runtime_dir() / "kernels"
    sources = [source for family in ("f32-norm", "f32-softmax", "f32-vmath") for source in sorted((kernels / family).glob("*.c"))]
    exe = tmp_path / ("harness.wasm" if target.is_wasm else "harness")
    static = ["-static"] if target.runner == "qemu" else []
    flags = [f for f in target_flags(target) if not f.startswith("-mexec-model")]  # a command with _start
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2", "-fno-math-errno",
                            *WARNINGS, f"-I{paths.runtime_dir() / 'include'}", str(HARNESS), *map(str, sources),
                            *static, "-o", str(exe), "-lm"], capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    if target.is_wasm:
        code, output = _run_wasi(exe)
    else:
        command = list(target.qemu) if target.runner == "qemu" else []
        proc = subprocess.run([*command, str(exe)], capture_output=True, text=True, timeout=300)
        code, output = proc.returncode, proc.stdout
    assert code == 0 and output.strip().splitlines()[-1].startswith("0 of "), output
