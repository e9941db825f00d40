"""Builds a kernel test harness (a C program with a main) for a target and runs it where this machine can:
natively, under qemu-user or in wasmtime; or, for a target without a C library, compiles the kernel
sources alone (warnings are errors) since nothing here runs them. Shared by the kernel families written on
the SIMD shim (mlcc/simd.h): one build per target covers every ISA they have."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlcc import paths
from mlcc.targets import Target, _host_cpu_flags, resolve
from mlcc.toolchain import WARNINGS, compile_flags, target_flags

# Every SIMD shim (AVX-512, AVX2, SIMD128, NEON on AArch64 and Armv7, RVV) and the portable builds
SIMD_TARGETS = ["x86_64-avx512", "x86_64", "wasm32", "aarch64", "armv7", "riscv64"]
PORTABLE_TARGETS = ["x86_64-baseline", "wasm32-scalar", "riscv64-scalar", "cortex-m4"]


def kernel_sources(*families: str) -> list[Path]:
    kernels = paths.runtime_dir() / "kernels"
    return [p for family in families for p in sorted((kernels / family).glob("*.c"))]


def runs_here(target: Target) -> bool:
    """Natively (the CPU has its features), under qemu-user (installed) or in wasmtime."""
    if target.runner == "host":
        return target.machine == platform.machine() and set(target.cpu_flags) <= _host_cpu_flags()
    if target.runner == "qemu":
        return shutil.which(target.qemu[0]) is not None
    return target.runner == "wasmtime"


def run_wasi(path: Path, args: tuple[str, ...] = ()) -> tuple[int, str]:
    """A WASI command's exit status and standard output, run in wasmtime with `args`."""
    import wasmtime

    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    out = path.with_suffix(".out")
    wasi = wasmtime.WasiConfig()
    wasi.stdout_file = str(out)
    if args:
        wasi.argv = (path.name, *args)
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


def run_harness(target: str | Target, harness: Path, sources: list[Path], tmp_path: Path, defines: tuple[str, ...] = (),
                args: tuple[str, ...] = ()) -> str | None:
    """The harness's standard output (asserting it built with `defines`, NAME=VALUE, and exited 0 run with
    `args`), or None for a freestanding target once the sources compiled. Skips, saying why, when this
    machine cannot run the target."""
    target = resolve(target) if isinstance(target, str) else target
    include = paths.runtime_dir() / "include"
    if not target.libc:
        for source in sources:
            build = subprocess.run([sys.executable, "-m", "ziglang", "cc", *compile_flags(target, [str(include)]),
                                    "-c", str(source), "-o", str(tmp_path / f"{source.stem}.o")],
                                   capture_output=True, text=True, cwd=tmp_path)
            assert build.returncode == 0, build.stderr
        return None
    if not runs_here(target):
        pytest.skip(f"{target.name} does not run here (CPU features, or qemu-user missing)")
    exe = tmp_path / ("harness.wasm" if target.is_wasm else "harness")
    static = ["-static"] if target.runner == "qemu" else []
    flags = [f for f in target_flags(target) if not f.startswith("-mexec-model")]  # a command with _start
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2", "-fno-math-errno",
                            *WARNINGS, f"-I{include}", *(f"-D{d}" for d in defines), str(harness), *map(str, sources),
                            *static, "-o", str(exe), "-lm"], capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    if target.is_wasm:
        code, output = run_wasi(exe, args)
    else:
        command = list(target.qemu) if target.runner == "qemu" else []
        proc = subprocess.run([*command, str(exe), *args], capture_output=True, text=True, timeout=600)
        code, output = proc.returncode, proc.stdout
    assert code == 0, f"{target.name}: {output}"
    return output


def run_board_harness(target_name: str, harness: Path, sources: list[Path], tmp_path: Path) -> str:
    """The console output of a harness built as firmware for a bare-metal target's emulated board
    (mlcc.firmware.program_command; printf from tests/kernels/board/) and run under qemu-system-arm;
    asserts it built and exited 0."""
    from mlcc import firmware
    from mlcc.runners.qemu_system import qemu_system_command

    target: Target = resolve(target_name)
    command = qemu_system_command(target)  # a RunError naming the package when the emulator is missing
    board_stdio = Path(__file__).with_name("board")
    image = tmp_path / "harness.elf"
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc",
                            *firmware.program_command(target, [harness, *sources, board_stdio / "stdio.c"], [board_stdio],
                                                      tmp_path / f"{target.board}.ld", image)],
                           capture_output=True, text=True, cwd=tmp_path)
    assert build.returncode == 0, build.stderr
    proc = subprocess.run([*command, "-kernel", str(image)], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{target.name} on {target.board}: {output}"
    return output
