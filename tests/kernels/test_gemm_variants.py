"""Every f32-gemm variant of runtime_c/kernels/f32-gemm/manifest.toml against the scalar oracle
(mlcc_f32_gemm__reference) at its tile edges, on its own ISA: gemm_variants.c, built with the kernels'
warning flags by Zig's clang, runs natively (AVX2, AVX-512, scalar), under qemu-user (NEON, RVV with
256-bit vectors) or in wasmtime (SIMD128). A variant is skipped only when this machine cannot run its ISA,
and the skip says why.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlcc import paths
from mlcc.ops._gemm import variants
from mlcc.targets import _host_cpu_flags
from mlcc.toolchain import WARNINGS

HARNESS = Path(__file__).with_name("gemm_variants.c")

# isa -> how to build and run its variants here: zig target flags, then "host", "wasmtime" or a qemu command
# (with the host CPU flags a native run needs)
ISAS = {
    "avx512": (["-target", "x86_64-linux-gnu", "-mcpu=x86_64_v4"], "host", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}),
    "avx2": (["-target", "x86_64-linux-gnu", "-mcpu=x86_64_v3"], "host", {"avx2", "fma"}),
    "scalar": (["-target", "x86_64-linux-gnu", "-mcpu=x86_64"], "host", set()),
    "neon": (["-target", "aarch64-linux-musl"], ["qemu-aarch64"], set()),
    "rvv": (["-target", "riscv64-linux-musl", "-mcpu=baseline_rv64+v"], ["qemu-riscv64", "-cpu", "rv64,v=true,vlen=256"], set()),
    "wasmsimd": (["-target", "wasm32-wasi", "-msimd128"], "wasmtime", set()),
}


def _run_wasi(path: Path) -> tuple[int, str]:
    import wasmtime

    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    out = path.with_suffix(".out")
    wasi = wasmtime.WasiConfig()
    wasi.stdout_file = str(out)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    instance = linker.instantiate(store, wasmtime.Module.from_file(engine, str(path)))
    code = 0
    try:
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as exit_:
        code = exit_.code
    return code, out.read_text()


@pytest.mark.parametrize("variant", variants(), ids=lambda v: v.name)
def test_variant_matches_reference(variant, tmp_path):
    flags, runner, cpu_flags = ISAS[variant.isa]
    if runner == "host" and (platform.machine() != "x86_64" or not cpu_flags <= _host_cpu_flags()):
        pytest.skip(f"this CPU lacks {' '.join(sorted(cpu_flags))} for {variant.name}")
    if isinstance(runner, list) and shutil.which(runner[0]) is None:
        pytest.skip(f"{runner[0]} is not installed (apt-get install qemu-user)")
    family = paths.runtime_dir() / "kernels" / "f32-gemm"
    exe = tmp_path / ("harness.wasm" if runner == "wasmtime" else "harness")
    static = [] if runner in ("host", "wasmtime") else ["-static"]
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2", "-fno-math-errno",
                            *WARNINGS, f"-I{paths.runtime_dir() / 'include'}",
                            f"-DVARIANT=mlcc_f32_gemm_config_{variant.name}",
                            str(HARNESS), *map(str, sorted(family.glob("*.c"))), *static, "-o", str(exe), "-lm"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    if runner == "wasmtime":
        code, output = _run_wasi(exe)
    else:
        proc = subprocess.run([*([] if runner == "host" else runner), str(exe)], capture_output=True, text=True, timeout=300)
        code, output = proc.returncode, proc.stdout
    assert code == 0 and ", 0 failures" in output, output
