"""Every f32-gemm variant of runtime_c/kernels/f32-gemm/manifest.toml against the scalar oracle
(mlcc_f32_gemm__reference) at its tile edges, on a target that selects it (targets/*.toml): gemm_variants.c,
built with the kernels' warning flags by Zig's clang for that target, runs natively (AVX2, AVX-512, scalar),
under qemu-user (NEON on AArch64 and Armv7, RVV at the target's VLEN) or in wasmtime (SIMD128, scalar). A
variant is skipped only when this machine can run none of its targets, and the skip says why.
"""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlcc import paths
from mlcc.ops._gemm import Tile, tile_for, variants
from mlcc.targets import Target, _host_cpu_flags, all_targets, host_target
from mlcc.toolchain import WARNINGS, target_flags

HARNESS = Path(__file__).with_name("gemm_variants.c")
# product widths that make tile_for pick each variant somewhere
PROBE_N = (8, 16, 64)


def _runs_here(target: Target) -> bool:
    if target.runner == "host":
        return target.machine == platform.machine() and set(target.cpu_flags) <= _host_cpu_flags()
    if target.runner == "qemu":
        return shutil.which(target.qemu[0]) is not None
    return target.runner == "wasmtime"


def _target_for(variant: Tile) -> Target:
    """A target this machine runs that selects the variant for some product (a portable one no target
    selects runs on the host target); skips, saying why, when there is none."""
    users = [t for t in all_targets().values()
             if t.libc and any(tile_for(t, n) == variant for n in (None, *PROBE_N))]
    if not users and not variant.features:
        users = [host_target()]
    runnable = [t for t in users if _runs_here(t)]
    if not runnable:
        pytest.skip(f"{variant.name}: none of {', '.join(t.name for t in users) or 'no target'} runs here "
                    "(CPU features, or qemu-user missing: apt-get install qemu-user)")
    return runnable[0]


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
    target = _target_for(variant)
    family = paths.runtime_dir() / "kernels" / "f32-gemm"
    exe = tmp_path / ("harness.wasm" if target.is_wasm else "harness")
    static = ["-static"] if target.runner == "qemu" else []
    # the harness is a program with a main, not a model's reactor module
    flags = [f for f in target_flags(target) if not f.startswith("-mexec-model")]
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2",
                            "-fno-math-errno", *WARNINGS, f"-I{paths.runtime_dir() / 'include'}",
                            f"-DVARIANT=mlcc_f32_gemm_config_{variant.name}",
                            str(HARNESS), *map(str, sorted(family.glob("*.c"))), *static, "-o", str(exe), "-lm"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    if target.is_wasm:
        code, output = _run_wasi(exe)
    else:
        command = list(target.qemu) if target.runner == "qemu" else []
        proc = subprocess.run([*command, str(exe)], capture_output=True, text=True, timeout=300)
        code, output = proc.returncode, proc.stdout
    assert code == 0 and ", 0 failures" in output, f"{target.name}: {output}"
