"""python -m benchmarks.gemm: the f32-gemm kernels alone, per variant this machine runs, on a 1024^3 product
and the shapes models give them (convolutions as weights x im2col columns, transformer projections, a
GEMV), with this core's measured FMA peak. B is packed beforehand (constant weights are packed at build
time), the bias is a row, nothing else runs.

    python -m benchmarks.gemm                       # the variants this machine runs natively, and SIMD128
    python -m benchmarks.gemm --variants 8x32__avx512 --repeat 21

Each figure is the median of --repeat runs in wall time and in this thread's CPU time (the second is steady on
a shared machine: time the thread was descheduled does not count; wasmtime has no CPU clock, so wall only).
Share of peak: of the peak of the variant's ISA (portable variants: of the host target's ISA, which they are
built for).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.measure import host_isa, peak_gflops
from mlcc import paths
from mlcc.ops._gemm import variants
from mlcc.targets import _host_cpu_flags, host_target
from mlcc.toolchain import target_flags

# (label, m, n, k): C[m][n] = A[m][k] * B[k][n]
SHAPES = [
    ("gemm 1024^3", 1024, 1024, 1024),
    ("conv3x3 64->64 @56x56", 64, 3136, 576),
    ("conv1x1 32->192 @56x56", 192, 3136, 32),
    ("conv3x3 512->512 @7x7", 512, 49, 4608),
    ("bert qkv 128x384x1152", 128, 1152, 384),
    ("bert ffn 128x384x1536", 128, 1536, 384),
    ("gemv 1x1280x1000", 1, 1000, 1280),
]

# isa -> (zig target flags, host CPU flags needed, peak ISA) for native runs
NATIVE = {
    "avx512": (["-target", "x86_64-linux-gnu", "-mcpu=x86_64_v4"], {"avx512f"}, "avx512"),
    "avx2": (["-target", "x86_64-linux-gnu", "-mcpu=x86_64_v3"], {"avx2", "fma"}, "avx2"),
}
WASM = ["-target", "wasm32-wasi", "-msimd128"]

DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "mlcc/kernels/f32-gemm.h"

extern const struct mlcc_f32_gemm_config VARIANT;

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    const struct mlcc_f32_gemm_config *cfg = &VARIANT;
    const size_t m = (size_t)atol(argv[1]), n = (size_t)atol(argv[2]), k = (size_t)atol(argv[3]);
    const int repeat = atoi(argv[4]);
    const size_t panels = (n + cfg->nr - 1) / cfg->nr;
    float *a = malloc(m * k * 4), *b = malloc(k * n * 4), *c = malloc(m * n * 4), *bias = malloc(n * 4);
    float *packed = malloc(panels * cfg->nr * k * 4);
    double wall[64], cpu[64];
    for (size_t i = 0; i < m * k; ++i) a[i] = (float)(i % 7) * 0.25f - 0.75f;
    for (size_t i = 0; i < k * n; ++i) b[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (size_t j = 0; j < n; ++j) bias[j] = 0.125f;
    mlcc_f32_gemm_pack_b(k, n, b, n, 1, cfg->nr, packed);
    mlcc_f32_gemm(cfg, m, n, k, a, k, 1, packed, c, n, 1.0f, bias, 0, 1, 1.0f, NULL);  /* warm up */
    for (int r = 0; r < repeat && r < 64; ++r) {
        const double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CPU_CLOCK);
        mlcc_f32_gemm(cfg, m, n, k, a, k, 1, packed, c, n, 1.0f, bias, 0, 1, 1.0f, NULL);
        cpu[r] = seconds(CPU_CLOCK) - c0;
        wall[r] = seconds(CLOCK_MONOTONIC) - w0;
    }
    qsort(wall, (size_t)repeat, sizeof wall[0], by_value);
    qsort(cpu, (size_t)repeat, sizeof cpu[0], by_value);
    printf("{\"wall_ms\": %.4f, \"cpu_ms\": %.4f, \"check\": %g}\n", 1e3 * wall[repeat / 2], 1e3 * cpu[repeat / 2],
           (double)c[(m - 1) * n + n - 1]);
    return 0;
}
"""


def _build(flags: list[str], variant: str, out: Path, cpu_clock: str) -> None:
    family = paths.runtime_dir() / "kernels" / "f32-gemm"
    source = out.with_suffix(".c")
    source.write_text(DRIVER)
    subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2", "-fno-math-errno",
                    f"-I{paths.runtime_dir() / 'include'}", f"-DVARIANT=mlcc_f32_gemm_config_{variant}",
                    f"-DCPU_CLOCK={cpu_clock}", str(source), *map(str, sorted(family.glob("*.c"))),
                    "-o", str(out), "-lm"], check=True, capture_output=True, text=True)


def _run_native(exe: Path, m: int, n: int, k: int, repeat: int) -> dict:
    proc = subprocess.run([str(exe), str(m), str(n), str(k), str(repeat)], check=True, capture_output=True, text=True)
    return json.loads(proc.stdout)


def _run_wasm(module: Path, m: int, n: int, k: int, repeat: int) -> dict:
    import wasmtime

    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    out = module.with_suffix(".out")
    wasi = wasmtime.WasiConfig()
    wasi.argv = ["gemm", str(m), str(n), str(k), str(repeat)]
    wasi.stdout_file = str(out)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    instance = linker.instantiate(store, wasmtime.Module.from_file(engine, str(module)))
    try:
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as exit_:
        if exit_.code:
            raise
    result = json.loads(out.read_text())
    result["cpu_ms"] = None
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gemm", description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", help="comma-separated variant names (default: every one this machine runs)")
    p.add_argument("--repeat", type=int, default=11, help="timed runs per shape, at most 64 [11]")
    p.add_argument("--shapes", help="comma-separated indices into the shape list [all]")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    args = p.parse_args(argv)
    flags = _host_cpu_flags()
    # the portable variants are built as the host target builds them (as they were before the SIMD ones)
    native = {**NATIVE, "scalar": (target_flags(host_target()), set(), host_isa())}
    chosen = [v for v in variants() if (v.isa in native and native[v.isa][1] <= flags) or v.isa == "wasmsimd"]
    if args.variants:
        names = set(args.variants.split(","))
        chosen = [v for v in chosen if v.name in names]
    shapes = SHAPES if not args.shapes else [SHAPES[int(i)] for i in args.shapes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-gemm-bench-") as tmp:
        peaks = peak_gflops(Path(tmp))
        for v in chosen:
            wasm = v.isa == "wasmsimd"
            exe = Path(tmp) / (f"{v.name}.wasm" if wasm else v.name)
            # wasi-libc has no thread CPU clock: the wall clock stands in (and is reported as wall only)
            _build(WASM if wasm else native[v.isa][0], v.name, exe,
                   "CLOCK_MONOTONIC" if wasm else "CLOCK_THREAD_CPUTIME_ID")
            peak = None if wasm else peaks.get(native[v.isa][2])
            for label, m, n, k in shapes:
                r = (_run_wasm if wasm else _run_native)(exe, m, n, k, args.repeat)
                flop = 2.0 * m * n * k
                best_ms = r["cpu_ms"] or r["wall_ms"]
                rate = flop / best_ms * 1e-6
                rows.append(dict(variant=v.name, shape=label, m=m, n=n, k=k, wall_ms=r["wall_ms"], cpu_ms=r["cpu_ms"],
                                 gflops=rate, peak=peak, share=rate / peak if peak else None))
    if args.json:
        print(json.dumps(dict(peaks=peaks, rows=rows), indent=1))
        return 0
    print(f"peak (fp32 FMA, one core): {', '.join(f'{k} {v:.1f} GFLOP/s' for k, v in peaks.items() if isinstance(v, float))}")
    print("| variant | shape | wall ms | cpu ms | GFLOP/s | share of peak |")
    print("|---|---|---:|---:|---:|---:|")
    for r in rows:
        cpu = f"{r['cpu_ms']:.3f}" if r["cpu_ms"] is not None else "-"
        share = f"{100 * r['share']:.0f}%" if r["share"] else "-"
        print(f"| {r['variant']} | {r['shape']} | {r['wall_ms']:.3f} | {cpu} | {r['gflops']:.1f} | {share} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
