"""python -m benchmarks.gemm: the f32-gemm kernels alone, per variant this machine runs, on a 1024^3 product
and the shapes models give them (convolutions as weights x im2col columns and as NHWC pixels x channels,
transformer projections, a GEMV), against this core's FMA peak. B is packed beforehand (constant weights
are packed at build time), the bias is a row, nothing else runs. Blocking: what mlcc computes for the
host target's caches (mlcc/ops/_gemm.py blocking), or --blocking KC,MC,NC; --sweep measures a grid of them.

    python -m benchmarks.gemm                       # the variants this machine runs natively, and SIMD128
    python -m benchmarks.gemm --variants 8x32__avx512 --repeat 21
    python -m benchmarks.gemm --variants 8x32__avx512 --relu --rounds 3   # ending in ReLU, as convolutions do
    python -m benchmarks.gemm --variants 8x32__avx512 --shapes 0 --sweep --rounds 5

Each figure is the median of --repeat runs (and of --rounds passes over all of them, interleaved) in wall time
and in this thread's CPU time (the second is steady on a shared machine: time the thread was descheduled does
not count; in wasmtime, the host's clock of the thread running the module).
Share of peak: each run is paired with a ~1 ms FMA loop on the variant's shim (the ISA it is built for)
timed right before it, and the share is the median of the runs' rate / that peak: on a shared machine
whose other vCPU takes the core's FMA units and caches in bursts, the pair sees the same conditions. The
best-case peak (benchmarks/peak.c, the best of 200 runs) is printed too. None for SIMD128: its loop (a multiply
then an add, compiled by wasmtime) runs slower than the GEMM kernels.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.measure import host_isa, peak_gflops
from mlcc import paths
from mlcc.ops._gemm import Blocking, Tile, blocking, variants
from mlcc.targets import _host_cpu_flags, host_target, resolve
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
    # channels-last (NHWC) convolutions: pixels x output channels
    ("nhwc conv3x3 64->64 @56x56", 3136, 64, 576),
    ("nhwc conv1x1 64->256 @56x56", 3136, 256, 64),
    ("nhwc conv3x3 512->512 @7x7", 49, 512, 4608),
    # the small models' narrow, shallow products (MLPerf Tiny, squeezenet's stem)
    ("nhwc conv3x3 16->16 @32x32 (resnet8)", 1024, 16, 144),
    ("nhwc conv3x3 3->16 @32x32 (resnet8)", 1024, 16, 27),
    ("nhwc conv3x3/2 3->8 @96x96 (vww)", 2304, 8, 27),
    ("nhwc conv1x1 8->16 @48x48 (vww)", 2304, 16, 8),
    ("nhwc conv10x4 1->64 @25x5 (ds-cnn)", 125, 64, 40),
    ("nhwc conv1x1 64->64 @25x5 (ds-cnn)", 125, 64, 64),
    ("nhwc conv3x3/2 3->64 @111x111 (squeezenet)", 12321, 64, 27),
    ("nhwc conv3x3 128->128 @28x28", 784, 128, 1152),
    ("nhwc conv3x3 256->256 @14x14", 196, 256, 2304),
    ("bert out 128x384x384", 128, 384, 384),
    ("bert ffn down 128x384x1536", 128, 384, 1536),
    # Winograd F(4x4,3x3): per transformed point, tiles x C_out x C_in
    ("winograd 56x56 C64 (128 of 196 tiles)", 128, 64, 64),
    ("winograd 28x28 C128", 49, 128, 128),
    ("winograd 14x14 C256", 16, 256, 256),
    ("winograd 16 tiles C512", 16, 512, 512),
    # resnet50's 1x1 convolutions (rows read in place C_in apart)
    ("nhwc conv1x1 256->64 @56x56 (resnet50)", 3136, 64, 256),
    ("nhwc conv1x1 512->128 @28x28 (resnet50)", 784, 128, 512),
    ("nhwc conv1x1 128->512 @28x28 (resnet50)", 784, 512, 128),
    ("nhwc conv1x1 1024->256 @14x14 (resnet50)", 196, 256, 1024),
    ("nhwc conv1x1 256->1024 @14x14 (resnet50)", 196, 1024, 256),
    ("nhwc conv1x1 2048->512 @7x7 (resnet50)", 49, 512, 2048),
    ("nhwc conv1x1 512->2048 @7x7 (resnet50)", 49, 2048, 512),
    # fully-connected layers at batch 1 (GEMV: the packed weights streamed once)
    ("gemv 1x4096x9216 (alexnet fc6)", 1, 4096, 9216),
    ("gemv 1x4096x4096 (alexnet fc7)", 1, 4096, 4096),
    ("gemv 1x1000x4096 (alexnet fc8)", 1, 1000, 4096),
    ("gemv 1x1000x1024", 1, 1000, 1024),
    ("gemv 1x1024x784 (mlp)", 1, 1024, 784),
    ("gemv 1x1024x1024 (mlp)", 1, 1024, 1024),
    ("gemv 1x1000x544 (shufflenet)", 1, 1000, 544),
]

# isa -> (the target whose build and blocking a variant of it gets, host CPU flags needed, peak ISA)
NATIVE = {
    "avx512": ("x86_64-avx512", {"avx512f"}, "avx512"),
    "avx2": ("x86_64", {"avx2", "fma"}, "avx2"),
}
WASM = "wasm32"
# --sweep: kc x mc (mc rows of A per block; the driver packs at most 16 KB of it), nc as computed
SWEEP_KC = (96, 128, 192, 256, 384)
SWEEP_MC = (8, 32, 256)

# What the kernel harnesses (this one, gemm_ab.py's, dwconv_ab.py's) start with: clocks, a sort order, 64-byte
# aligned arrays (like generated code's weights and arena: malloc's 16 would split every AVX-512 load).
PRELUDE = r"""
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* This thread's CPU time: on a loaded machine, wall time counts the neighbours' turns (WASI has no thread CPU
 * clock: the host lends its own, as mlcc bench does). */
#if defined(__wasm__)
__attribute__((import_module("mlcc_bench"), import_name("thread_cpu_ns"))) long long thread_cpu_ns(void);
static double cpu_seconds(void) { return 1e-9 * (double)thread_cpu_ns(); }
#else
static double cpu_seconds(void) { return seconds(CLOCK_THREAD_CPUTIME_ID); }
#endif

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static float *aligned(size_t count)
{
    void *p = NULL;
    return posix_memalign(&p, 64, count * sizeof(float)) == 0 ? (float *)p : NULL;
}
"""

DRIVER = PRELUDE + r"""
#include "mlcc/kernels/f32-gemm.h"
#include "mlcc/simd.h"

extern const struct mlcc_f32_gemm_config VARIANT;

/* GFLOP/s of 12 independent multiply-add chains on registers right now (about a millisecond): the core's
 * peak under the same conditions as the run it is paired with. 0 without a SIMD shim. */
static double fma_peak(const float *ab)
{
#if MLCC_HAVE_F32V
    const long iterations = 200000;
    const mlcc_f32v a = mlcc_f32v_splat(ab[0]), b = mlcc_f32v_splat(ab[1]);
    mlcc_f32v acc[12];
    float out[MLCC_F32V_LANES];
    for (int j = 0; j < 12; ++j) acc[j] = mlcc_f32v_splat((float)j);
    const double t0 = cpu_seconds();
    for (long i = 0; i < iterations; ++i)
        for (int j = 0; j < 12; ++j) acc[j] = mlcc_f32v_fma(b, acc[j], a);
    const double t = cpu_seconds() - t0;
    for (int j = 1; j < 12; ++j) acc[0] = mlcc_f32v_add(acc[0], acc[j]);
    mlcc_f32v_store(out, acc[0]);
    if (out[0] == 12345.0f) printf("%g\n", (double)out[0]);  /* keeps the chains live */
    return 2.0 * MLCC_F32V_LANES * 12 * (double)iterations / t * 1e-9;
#else
    (void)ab;
    return 0.0;
#endif
}

int main(int argc, char **argv)
{
    struct mlcc_f32_gemm_config config = VARIANT;
    const struct mlcc_f32_gemm_config *cfg = &config;
    const size_t m = (size_t)atol(argv[1]), n = (size_t)atol(argv[2]), k = (size_t)atol(argv[3]);
    const int repeat = atoi(argv[4]);
    const float ab[2] = {0.999999f, 1e-7f * (float)argc};
    if (argc > 7) {  /* the blocking to measure: kc mc nc */
        config.kc = (size_t)atol(argv[5]);
        config.mc = (size_t)atol(argv[6]);
        config.nc = (size_t)atol(argv[7]);
    }
    const size_t panels = (n + cfg->nr - 1) / cfg->nr;
    /* 64-byte aligned like generated code's weights and arena: malloc's 16 would split every AVX-512 load */
    float *a = aligned(m * k), *b = aligned(k * n), *c = aligned(m * n), *bias = aligned(n);
    float *packed = aligned(panels * cfg->nr * k);
    double wall[64], cpu[64], share[64], peak[64];
    for (size_t i = 0; i < m * k; ++i) a[i] = (float)(i % 7) * 0.25f - 0.75f;
    for (size_t i = 0; i < k * n; ++i) b[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (size_t j = 0; j < n; ++j) bias[j] = 0.125f;
    mlcc_f32_gemm_pack_b(k, n, b, n, 1, cfg->nr, packed);
#if RELU  /* as the convolutions end: the epilogue in the micro-kernel's finish */
    static const struct mlcc_f32_epilogue relu = {MLCC_ACTIVATION_RELU, 0.0f, 0.0f, NULL, 0u, 0u};
    const struct mlcc_f32_epilogue *epilogue = &relu;
#else
    const struct mlcc_f32_epilogue *epilogue = NULL;
#endif
    mlcc_f32_gemm(cfg, m, n, k, a, k, 1, packed, c, n, 1.0f, bias, 0, 1, 1.0f, epilogue);  /* warm up */
    for (int r = 0; r < repeat && r < 64; ++r) {
        peak[r] = fma_peak(ab);
        const double w0 = seconds(CLOCK_MONOTONIC), c0 = cpu_seconds();
        mlcc_f32_gemm(cfg, m, n, k, a, k, 1, packed, c, n, 1.0f, bias, 0, 1, 1.0f, epilogue);
        cpu[r] = cpu_seconds() - c0;
        wall[r] = seconds(CLOCK_MONOTONIC) - w0;
        share[r] = 2e-9 * (double)m * (double)n * (double)k / cpu[r] / peak[r];
    }
    qsort(wall, (size_t)repeat, sizeof wall[0], by_value);
    qsort(cpu, (size_t)repeat, sizeof cpu[0], by_value);
    qsort(share, (size_t)repeat, sizeof share[0], by_value);
    qsort(peak, (size_t)repeat, sizeof peak[0], by_value);
    printf("{\"wall_ms\": %.4f, \"cpu_ms\": %.4f, \"min_cpu_ms\": %.4f, \"share\": %.4f, \"peak\": %.2f, "
           "\"check\": %g}\n", 1e3 * wall[repeat / 2], 1e3 * cpu[repeat / 2], 1e3 * cpu[0],
           MLCC_HAVE_F32V ? share[repeat / 2] : 0.0, peak[repeat / 2], (double)c[(m - 1) * n + n - 1]);
    return 0;
}
"""


def _build(flags: list[str], variant: str, out: Path, relu: bool = False) -> None:
    family = paths.runtime_dir() / "kernels" / "f32-gemm"
    source = out.with_suffix(".c")
    source.write_text(DRIVER)
    # the harness is a program with a main, not a model's reactor module
    flags = [f for f in flags if not f.startswith("-mexec-model")]
    subprocess.run([sys.executable, "-m", "ziglang", "cc", *flags, "-std=c99", "-O2", "-fno-math-errno",
                    f"-I{paths.runtime_dir() / 'include'}", f"-DVARIANT=mlcc_f32_gemm_config_{variant}",
                    f"-DRELU={int(relu)}", str(source), *map(str, sorted(family.glob("*.c"))),
                    "-o", str(out), "-lm"], check=True, capture_output=True, text=True)


def _arguments(m: int, n: int, k: int, repeat: int, b: Blocking) -> list[str]:
    return [str(x) for x in (m, n, k, repeat, b.kc, b.mc, b.nc)]


def _run_native(exe: Path, m: int, n: int, k: int, repeat: int, b: Blocking) -> dict:
    proc = subprocess.run([str(exe), *_arguments(m, n, k, repeat, b)], check=True, capture_output=True, text=True)
    return json.loads(proc.stdout)


def run_wasi(module: Path, argv: list[str]) -> str:
    """A WASI program's standard output, run in wasmtime with this thread's CPU clock lent as an import."""
    import wasmtime

    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    out = module.with_suffix(".out")
    wasi = wasmtime.WasiConfig()
    wasi.argv = [module.stem, *argv]
    wasi.stdout_file = str(out)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    linker.define_func("mlcc_bench", "thread_cpu_ns", wasmtime.FuncType([], [wasmtime.ValType.i64()]),
                       time.thread_time_ns)
    instance = linker.instantiate(store, wasmtime.Module.from_file(engine, str(module)))
    try:
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as exit_:
        if exit_.code:
            raise
    return out.read_text()


def _run_wasm(module: Path, m: int, n: int, k: int, repeat: int, b: Blocking) -> dict:
    return json.loads(run_wasi(module, _arguments(m, n, k, repeat, b)))


def parse_shape(parser: argparse.ArgumentParser, text: str) -> tuple[int, int, int]:
    """--shape M,N,K as three positive integers, or the parser's one-line error."""
    try:
        m, n, k = (int(d) for d in text.split(","))
    except ValueError:
        parser.error(f"--shape {text!r}: expected M,N,K, three integers")
    if min(m, n, k) < 1:
        parser.error(f"--shape {text!r}: every dimension must be 1 or more")
    return m, n, k


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gemm", description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", help="comma-separated variant names (default: every one this machine runs)")
    p.add_argument("--repeat", type=int, default=11, help="timed runs per shape, at most 64 [11]")
    p.add_argument("--shapes", help="comma-separated indices into the shape list [all]")
    p.add_argument("--shape", action="append", default=[], metavar="M,N,K",
                   help="a product of your own, repeatable: measured alone, or with --shapes' picks")
    p.add_argument("--rounds", type=int, default=1, help="passes over all runs, medians across them [1]")
    p.add_argument("--blocking", help="KC,MC,NC for every variant instead of what mlcc computes for its target")
    p.add_argument("--sweep", action="store_true", help=f"measure every KC in {SWEEP_KC} x MC in {SWEEP_MC}")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    p.add_argument("--relu", action="store_true", help="end every product in ReLU, as convolutions do (the epilogue)")
    args = p.parse_args(argv)
    flags = _host_cpu_flags()
    # the portable variants are built as the host target builds them (as they were before the SIMD ones)
    native = {**NATIVE, "scalar": (host_target().name, set(), host_isa())}
    chosen = [v for v in variants() if (v.isa in native and native[v.isa][1] <= flags) or v.isa == "wasmsimd"]
    if args.variants:
        names = set(args.variants.split(","))
        chosen = [v for v in chosen if v.name in names]
    picked = [SHAPES[int(i)] for i in args.shapes.split(",")] if args.shapes else []
    own = [(f"{m}x{n}x{k}", m, n, k) for m, n, k in (parse_shape(p, text) for text in args.shape)]
    shapes = picked + own if (picked or own) else SHAPES
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-gemm-bench-") as tmp:
        peaks = peak_gflops(Path(tmp))
        for v in chosen:
            wasm = v.isa == "wasmsimd"
            target = resolve(WASM if wasm else native[v.isa][0])
            exe = Path(tmp) / (f"{v.name}.wasm" if wasm else v.name)
            _build(target_flags(target), v.name, exe, args.relu)
            runs = [(b, shape) for b in _blockings(args, target, v) for shape in shapes]
            results: list[list[dict]] = [[] for _ in runs]
            for _ in range(args.rounds):  # rounds interleave the runs, so a burst of load hits them alike
                for (b, (_label, m, n, k)), found in zip(runs, results):
                    found.append((_run_wasm if wasm else _run_native)(exe, m, n, k, args.repeat, b))
            for (b, (label, m, n, k)), found in zip(runs, results):
                r = {key: statistics.median(f[key] for f in found) if found[0][key] is not None else None
                     for key in ("wall_ms", "cpu_ms", "share")}
                rate = 2.0 * m * n * k / (r["cpu_ms"] or r["wall_ms"]) * 1e-6
                rows.append(dict(variant=v.name, shape=label, m=m, n=n, k=k, kc=b.kc, mc=b.mc, nc=b.nc,
                                 wall_ms=r["wall_ms"], cpu_ms=r["cpu_ms"], gflops=rate,
                                 share=None if wasm else r["share"]))
    if args.json:
        print(json.dumps(dict(peaks=peaks, rows=rows), indent=1))
        return 0
    print(f"best-case peak (fp32 FMA, one core): "
          f"{', '.join(f'{k} {v:.1f} GFLOP/s' for k, v in peaks.items() if isinstance(v, float))}")
    print("| variant | shape | kc, mc, nc | wall ms | cpu ms | GFLOP/s | share of peak |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        cpu = f"{r['cpu_ms']:.3f}" if r["cpu_ms"] is not None else "-"
        share = f"{100 * r['share']:.0f}%" if r["share"] else "-"
        print(f"| {r['variant']} | {r['shape']} | {r['kc']}, {r['mc']}, {r['nc']} | {r['wall_ms']:.3f} | {cpu} "
              f"| {r['gflops']:.1f} | {share} |")
    return 0


def _blockings(args, target, variant: Tile) -> list[Blocking]:
    """The blockings to measure: mlcc's for the target, --blocking's, or the --sweep grid."""
    computed = blocking(target, variant)
    if args.blocking:
        return [Blocking(*(int(x) for x in args.blocking.split(",")))]
    if args.sweep:
        return [computed] + [Blocking(kc, mc, computed.nc) for kc in SWEEP_KC for mc in SWEEP_MC]
    return [computed]


if __name__ == "__main__":
    sys.exit(main())
