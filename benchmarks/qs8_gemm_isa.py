"""The qs8-gemm row kernels of the emulated ISAs against their __reference, on one product (M x N x K =
16 x 16 x 256 by default, 65,536 multiply-adds): instructions executed per call, counted by the emulator
(qemu-user for aarch64, aarch64-dotprod, armv7 and riscv64 at the target's VLEN; qemu-system-arm on the
mps2-an386 and mps3-an547 boards for cortex-m4 and cortex-m55). An instruction count is not a cycle count
(an sdot or a VMLADAVA does more per instruction than an add, and no memory system is modelled), but it is
exact and repeatable, which timings under emulation are not. wasm32-relaxed runs in wasmtime on this machine,
so its kernels are timed instead: CPU time per call, median of alternating rounds.

    python -m benchmarks.qs8_gemm_isa [--shape 16,16,256] [--targets aarch64,cortex-m4,...]

Writes benchmarks/results/qs8_gemm_isa.md.
"""

from __future__ import annotations

import argparse
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlcc import firmware, kernels, paths
from mlcc.runners.qemu_system import SEMIHOSTING
from mlcc.targets import resolve
from mlcc.toolchain import target_flags

RESULTS = Path(__file__).resolve().parent / "results"
SOURCE = Path(__file__).with_name("qs8_gemm_count.c")
# target -> the row kernels it builds, best last
COUNTED = {"aarch64": ["neon"], "aarch64-dotprod": ["neon", "neondot"], "armv7": ["neon"], "riscv64": ["rvv"],
           "cortex-m4": ["dsp"], "cortex-m55": ["dsp", "mve"]}
TIMED = {"wasm32-relaxed": ["wasmsimd", "wasmrelaxed"]}


def _sources() -> list[Path]:
    return sorted((kernels.kernels_dir() / "qs8-gemm").glob("*.c"))


def _build(target, kernel: str, calls: int, shape: tuple[int, int, int], out: Path) -> None:
    m, n, k = shape
    defines = [f"-DKERNEL=mlcc_qs8_gemm__{kernel}", f"-DCALLS={calls}", f"-DM={m}", f"-DN={n}", f"-DK={k}"]
    if target.board:
        cmd = firmware.program_command(target, [SOURCE, *_sources()], [], out.with_suffix(".ld"), out)
    else:
        flags = [f for f in target_flags(target) if not f.startswith("-mexec-model")]
        cmd = [*flags, "-std=c99", "-O2", f"-I{paths.runtime_dir() / 'include'}", str(SOURCE), *map(str, _sources()),
               *(["-static"] if target.runner == "qemu" else []), "-o", str(out)]
    subprocess.run([sys.executable, "-m", "ziglang", "cc", *cmd, *defines], check=True, capture_output=True)


def _instructions(target, image: Path, log: Path) -> int:
    """Instructions executed by the image: one translation block per instruction, each logged as it runs."""
    if target.board:
        command = [*target.qemu, *SEMIHOSTING, "-kernel", str(image)]
        version = subprocess.run([command[0], "--version"], capture_output=True, text=True).stdout
        major, minor = (int(v) for v in re.search(r"version (\d+)\.(\d+)", version).groups())
        # qemu-system before 8.1 spells it -singlestep
        single = ["-accel", "tcg,one-insn-per-tb=on"] if (major, minor) >= (8, 1) else ["-singlestep"]
    else:
        command = [*target.qemu, str(image)]
        single = ["-one-insn-per-tb"]
    trace = [*single, "-d", "exec,nochain", "-D", str(log)]
    subprocess.run([command[0], *trace, *command[1:]], capture_output=True, timeout=600, cwd=log.parent)
    with log.open("rb") as f:
        return sum(1 for line in f if line.startswith(b"Trace"))


def count(target_name: str, kernel: str, shape, tmp: Path) -> int:
    """Instructions per call: the difference between 3 calls and 1, halved."""
    target = resolve(target_name)
    runs = []
    for calls in (1, 3):
        image = tmp / f"{target_name}-{kernel}-{calls}{'.elf' if target.board else ''}"
        _build(target, kernel, calls, shape, image)
        runs.append(_instructions(target, image, tmp / f"{image.name}.log"))
    return (runs[1] - runs[0]) // 2


def timed(target_name: str, kernels_: list[str], shape, tmp: Path, rounds: int = 7, calls: int = 2000) -> dict[str, float]:
    """CPU microseconds per call in wasmtime, median of alternating rounds (compilation outside the clock)."""
    import wasmtime

    target = resolve(target_name)
    engine = wasmtime.Engine()
    modules = {}
    for kernel in kernels_:
        image = tmp / f"{target_name}-{kernel}.wasm"
        _build(target, kernel, calls, shape, image)
        modules[kernel] = wasmtime.Module.from_file(engine, str(image))
    samples: dict[str, list[float]] = {k: [] for k in kernels_}
    for _ in range(rounds):
        for kernel, module in modules.items():
            store = wasmtime.Store(engine)
            store.set_wasi(wasmtime.WasiConfig())
            linker = wasmtime.Linker(engine)
            linker.define_wasi()
            start = linker.instantiate(store, module).exports(store)["_start"]
            begin = time.process_time()
            try:
                start(store)
            except wasmtime.ExitTrap:
                pass
            samples[kernel].append((time.process_time() - begin) / calls * 1e6)
    return {k: statistics.median(v) for k, v in samples.items()}


def _cpu() -> str:
    try:
        model = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                     if ln.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.machine()
    return model


def _wasmtime_version() -> str:
    from importlib.metadata import version

    return version("wasmtime")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="16,16,256", help="M,N,K")
    parser.add_argument("--targets", default=",".join([*COUNTED, *TIMED]), help="a subset (the results file is rewritten)")
    args = parser.parse_args(argv)
    chosen = set(args.targets.split(","))
    shape = tuple(int(v) for v in args.shape.split(","))
    macs = shape[0] * shape[1] * shape[2]
    lines = [f"# qs8-gemm row kernels per ISA: M x N x K = {' x '.join(map(str, shape))} ({macs:,} multiply-adds)", "",
             "Instructions executed per call as the emulator counts them (`python -m benchmarks.qs8_gemm_isa`; qemu "
             "-one-insn-per-tb -d exec: one logged block per instruction). Not cycles: see the module's docstring.", "",
             "clang auto-vectorises the scalar __reference where the target's vectors allow (sdot on aarch64-dotprod, "
             "VMLADAVA on cortex-m55), so there it is a vector baseline. A target runs its variant's kernel (the "
             "last listed); cortex-m55's dsp row is for comparison only. Each call also requantizes its 256 outputs "
             "with the shared scalar code.", "",
             "| target | kernel | instructions per call | multiply-adds per instruction | reference / kernel |",
             "|---|---|---:|---:|---:|"]
    with tempfile.TemporaryDirectory(prefix="qs8-isa-") as tmp:
        for target_name, kernels_ in COUNTED.items():
            if target_name not in chosen:
                continue
            base = count(target_name, "reference", shape, Path(tmp))
            lines.append(f"| {target_name} | reference | {base:,} | {macs / base:.2f} | 1.00 |")
            for kernel in kernels_:
                n = count(target_name, kernel, shape, Path(tmp))
                lines.append(f"| {target_name} | {kernel} | {n:,} | {macs / n:.2f} | {base / n:.2f} |")
                print(lines[-1], flush=True)
        for target_name, kernels_ in TIMED.items():
            if target_name not in chosen:
                continue
            times = timed(target_name, ["reference", *kernels_], shape, Path(tmp))
            lines += ["", f"{target_name} in wasmtime {_wasmtime_version()} on this machine ({_cpu()}), CPU time per call, median "
                      "of 7 alternating rounds of 2000 calls:", "", "| kernel | us per call | vs reference |", "|---|---:|---:|"]
            lines += [f"| {k} | {t:.2f} | {times['reference'] / t:.2f}x |" for k, t in times.items()]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "qs8_gemm_isa.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
