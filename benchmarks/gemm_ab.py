"""python -m benchmarks.gemm_ab: one f32-gemm variant from two versions of runtime_c, A and B, timed in the
same process, alternating call by call, so that a burst of load from the VM's neighbours hits both alike.

    python -m benchmarks.gemm_ab HEAD . --variant 4x8__wasmsimd --shape 3136,96,16 --shape 128,1536,384
    python -m benchmarks.gemm_ab HEAD~3 HEAD --variant 8x32__avx512 --shape 1024,1024,1024 --rounds 20
    python -m benchmarks.gemm_ab HEAD . --variant 4x8__wasmsimd --shape 128,384,384 --engine node
    python -m benchmarks.gemm_ab main . --variant 6x16__avx2 --shape 49,2048,512 --cold

A SIMD128 variant runs in wasmtime, or with --engine node in V8 (node --no-liftoff, benchmarks/web/wasi.mjs), the
engine onnxruntime-web runs in: the two compile the same module differently.

A version is a git revision (its runtime_c/ is extracted) or "." for the working tree. Each version's driver
(gemm.c) and variant file are compiled into the one program, their symbols renamed apart; the products end in
bias + ReLU as convolutions do, with mlcc's blocking for the variant's target. Separate-process A/B on this
shared VM differed by up to 2x for identical code (session 7). Time a version against itself first: the
ratios it reads are the noise floor (0.98-1.13 with the machine under load, 20 rounds).
With --cold each call reads its own copy of packed B, so B comes from memory as a model's weights do (one
product runs ~100 MB of weights past the cache): products of few rows wait on it (6x16__avx2 49x2048x512 1.22 ms
cold against 0.97 warm; 196x256x1024 0.97 against 0.92). Times are the thread's CPU time (in node, the
process's): wall time counted the neighbours' turns. Prints, per shape, the minimum and median time of each,
the ratios B/A, and whether the outputs are bit-identical.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from benchmarks.gemm import NATIVE, PRELUDE, WASM, parse_shape, run_wasi
from benchmarks.measure import WEB, native_levels
from mlcc import paths
from mlcc.ops._gemm import blocking, variants
from mlcc.targets import _host_cpu_flags, resolve
from mlcc.toolchain import target_flags

HARNESS = PRELUDE + r"""
#include "mlcc/kernels/f32-gemm.h"

#define GEMM(name) void name(const struct mlcc_f32_gemm_config *, size_t, size_t, size_t, const float *, size_t, \
                             size_t, const float *, float *, size_t, float, const float *, size_t, size_t, float, \
                             const struct mlcc_f32_epilogue *)
GEMM(gemm_A);
GEMM(gemm_B);
void pack_b_A(size_t, size_t, const float *, size_t, size_t, size_t, float *);
extern const struct mlcc_f32_gemm_config config_A, config_B;

int main(int argc, char **argv)
{
    const size_t m = (size_t)atol(argv[1]), n = (size_t)atol(argv[2]), k = (size_t)atol(argv[3]);
    const int rounds = atoi(argv[4]);
    struct mlcc_f32_gemm_config a_config = config_A, b_config = config_B;
    static const struct mlcc_f32_epilogue relu = {MLCC_ACTIVATION_RELU, 0.0f, 0.0f, NULL, 0u, 0u};
    float *a = aligned(m * k), *b = aligned(k * n), *bias = aligned(n), *c_a = aligned(m * n), *c_b = aligned(m * n);
    const size_t packed_floats = (n + config_A.nr - 1) / config_A.nr * config_A.nr * k;
    /* --cold: B in enough copies that each call finds its copy in memory, not cache, as a model's weights */
    const size_t copies = argc > 8 ? (size_t)atol(argv[8]) : 1;
    float *packed = aligned(packed_floats * copies);
    double *t_a = malloc((size_t)rounds * sizeof(double)), *t_b = malloc((size_t)rounds * sizeof(double));
    int same = 1;
    if (argc > 7) {  /* mlcc's blocking for the variant's target, the same for both */
        a_config.kc = b_config.kc = (size_t)atol(argv[5]);
        a_config.mc = b_config.mc = (size_t)atol(argv[6]);
        a_config.nc = b_config.nc = (size_t)atol(argv[7]);
    }
    for (size_t i = 0; i < m * k; ++i) a[i] = (float)(i % 7) * 0.25f - 0.75f;
    for (size_t i = 0; i < k * n; ++i) b[i] = (float)(i % 5) * 0.25f - 0.5f;
    for (size_t j = 0; j < n; ++j) bias[j] = 0.125f;
    for (size_t copy = 0; copy < copies; ++copy)  /* both versions' panel layout, checked by the outputs */
        pack_b_A(k, n, b, n, 1, config_A.nr, packed + copy * packed_floats);
    for (int r = -2; r < rounds; ++r) {  /* two untimed rounds first */
        const float *packed_a = packed + (size_t)(2 * (r + 2)) % copies * packed_floats;
        const float *packed_b = packed + (size_t)(2 * (r + 2) + 1) % copies * packed_floats;
        const double t0 = cpu_seconds();
        gemm_A(&a_config, m, n, k, a, k, 1, packed_a, c_a, n, 1.0f, bias, 0, 1, 1.0f, &relu);
        const double t1 = cpu_seconds();
        gemm_B(&b_config, m, n, k, a, k, 1, packed_b, c_b, n, 1.0f, bias, 0, 1, 1.0f, &relu);
        const double t2 = cpu_seconds();
        if (r >= 0) {
            t_a[r] = t1 - t0;
            t_b[r] = t2 - t1;
        }
    }
    for (size_t i = 0; i < m * n; ++i) same &= c_a[i] == c_b[i];
    qsort(t_a, (size_t)rounds, sizeof(double), by_value);
    qsort(t_b, (size_t)rounds, sizeof(double), by_value);
    printf("%g %g %g %g %d\n", 1e3 * t_a[0], 1e3 * t_a[rounds / 2], 1e3 * t_b[0], 1e3 * t_b[rounds / 2], same);
    return 0;
}
"""


def _runtime_of(version: str, into: Path) -> Path:
    """runtime_c/ of a git revision, or of the working tree for "."."""
    if version == ".":
        return paths.runtime_dir()
    root = paths.runtime_dir().parent
    archive = subprocess.run(["git", "-C", str(root), "archive", version, "runtime_c"], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"error: git revision {version!r}: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into / "runtime_c"


def native_ab_arguments(prog: str, description: str, shape_metavar: str, shape_help: str) -> argparse.ArgumentParser:
    """The arguments of a kernel A/B on this machine's native SIMD levels: two versions, -t, --shape, --rounds."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("a", help="version A: a git revision, or . for the working tree")
    p.add_argument("b", help="version B: likewise")
    p.add_argument("-t", "--target", default=None, help="a native SIMD level of this machine [its best]")
    p.add_argument("--shape", action="append", metavar=shape_metavar, help=shape_help)
    p.add_argument("--rounds", type=int, default=41, help="alternating timings of each version per shape [41]")
    return p


def native_ab_target(p: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, object, str]:
    """-t checked against the levels this machine runs (and --rounds): the level's name, target and ISA."""
    levels = native_levels()
    name = args.target or (levels[0] if levels else None)
    if name not in levels:
        p.error(f"-t {args.target!r}: this machine runs {', '.join(levels) or 'no SIMD level'}")
    if args.rounds < 1:
        p.error("--rounds must be 1 or more")
    target = resolve(name)
    return name, target, "avx512" if "avx512f" in target.features else "avx2"


def _build(flags: list[str], variant, runtimes: dict[str, Path], out: Path) -> None:
    """Both versions' driver and variant, symbols suffixed _A and _B, and the harness, into one program."""
    flags = [f for f in flags if not f.startswith("-mexec-model")]
    tile = f"{variant.mr}x{variant.nr}__{variant.isa}"
    objects = []
    for side, runtime in runtimes.items():
        family = runtime / "kernels" / "f32-gemm"
        file = next((line.split("=", 1)[1].strip().strip('"') for line in _variant_block(family, variant.name)
                     if line.startswith("file")), None)
        if file is None:
            sys.exit(f"error: variant {variant.name!r} is not in {family}/manifest.toml of version {side}")
        renames = [f"-Dmlcc_f32_gemm=gemm_{side}", f"-Dmlcc_f32_gemm_part=gemm_part_{side}",
                   f"-Dmlcc_f32_gemm_pack_b=pack_b_{side}",
                   f"-Dmlcc_f32_gemm__reference=reference_{side}",
                   f"-Dmlcc_f32_gemm_config_{variant.name}=config_{side}",
                   f"-Dmlcc_f32_gemm_ukernel_{tile}=tile_{side}",
                   f"-Dmlcc_f32_gemm_ukernel_1x{variant.nr}__{variant.isa}=row_{side}"]
        for source in ("gemm.c", file):
            obj = out.parent / f"{side}-{source}.o"
            _zig([*flags, "-std=c99", "-O2", "-fno-math-errno", f"-I{runtime / 'include'}", *renames, "-c",
                  str(family / source), "-o", str(obj)])
            objects.append(str(obj))
    harness = out.parent / "harness.c"
    harness.write_text(HARNESS)
    _zig([*flags, "-std=c99", "-O2", f"-I{runtimes['A'] / 'include'}", str(harness), *objects, "-o", str(out), "-lm"])


def _variant_block(family: Path, name: str) -> list[str]:
    """The manifest lines of one [[variant]] block."""
    blocks = (family / "manifest.toml").read_text().split("[[variant]]")
    return next(([line.strip() for line in b.splitlines()] for b in blocks if f'name = "{name}"' in b), [])


def _zig(args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"error: compiling the A/B program failed:\n{proc.stderr.strip()}")


def _run(program: Path, engine: str | None, arguments: list[str]) -> list[float]:
    if engine == "wasmtime":
        output = run_wasi(program, arguments)
    else:
        command = [str(program)] if engine is None else ["node", "--no-liftoff", str(WEB / "wasi.mjs"), str(program)]
        output = subprocess.run([*command, *arguments], check=True, capture_output=True, text=True).stdout
    return [float(x) for x in output.split()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gemm_ab", description=__doc__.split("\n\n")[0])
    p.add_argument("a", help="version A: a git revision, or . for the working tree")
    p.add_argument("b", help="version B: likewise")
    p.add_argument("--variant", required=True, help="an f32-gemm variant, e.g. 4x8__wasmsimd or 8x32__avx512")
    p.add_argument("--shape", action="append", required=True, metavar="M,N,K", help="a product, repeatable")
    p.add_argument("--rounds", type=int, default=40, help="alternating calls of each version per shape [40]")
    p.add_argument("--engine", choices=("wasmtime", "node"), default="wasmtime",
                   help="the engine a SIMD128 variant runs in [wasmtime]")
    p.add_argument("--cold", action="store_true",
                   help="each call reads its own copy of packed B (copies past 96 MB in all), so B comes from "
                        "memory as a model's weights do, not from the cache the previous call left it in")
    args = p.parse_args(argv)
    variant = next((v for v in variants() if v.name == args.variant), None)
    if variant is None:
        p.error(f"--variant {args.variant!r}: not one of {', '.join(v.name for v in variants())}")
    wasm = variant.isa == "wasmsimd"
    if not wasm and (variant.isa not in NATIVE or not NATIVE[variant.isa][1] <= _host_cpu_flags()):
        p.error(f"--variant {args.variant!r}: this machine runs wasmsimd and "
                f"{', '.join(isa for isa, (_, need, _) in NATIVE.items() if need <= _host_cpu_flags())} variants")
    if args.rounds < 1:
        p.error("--rounds must be 1 or more")
    shapes = [parse_shape(p, text) for text in args.shape]
    target = resolve(WASM if wasm else NATIVE[variant.isa][0])
    b = blocking(target, variant)
    with tempfile.TemporaryDirectory(prefix="mlcc-gemm-ab-") as tmp:
        runtimes = {side: _runtime_of(version, Path(tmp) / side) for side, version in (("A", args.a), ("B", args.b))}
        program = Path(tmp) / ("ab.wasm" if wasm else "ab")
        _build(target_flags(target), variant, runtimes, program)
        engine = args.engine if wasm else None
        print(f"{variant.name}{f' in {engine}' if engine else ''}: A = {args.a}, B = {args.b}; "
              f"{args.rounds} alternating calls each, kc {b.kc}, "
              f"mc {b.mc}, nc {b.nc}, bias + ReLU")
        print("| shape | A min ms | A median ms | B min ms | B median ms | B/A min | B/A median | outputs |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        def copies(n: int, k: int) -> int:
            packed_bytes = (n + variant.nr - 1) // variant.nr * variant.nr * k * 4
            return max(2, -(-(96 << 20) // packed_bytes)) if args.cold else 1

        for m, n, k in shapes:
            a_min, a_med, b_min, b_med, same = _run(program, engine, [str(x) for x in (m, n, k, args.rounds,
                                                                                    b.kc, b.mc, b.nc, copies(n, k))])
            print(f"| {m}x{n}x{k} | {a_min:.4f} | {a_med:.4f} | {b_min:.4f} | {b_med:.4f} | {b_min / a_min:.3f} "
                  f"| {b_med / a_med:.3f} | {'bit-identical' if same else 'differ'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
