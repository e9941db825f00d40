"""python -m benchmarks.conv_direct_ab: f32-conv's direct channels-last kernel (the stems' and grouped
convolutions', conv-direct-nhwc.c) from two versions of runtime_c, A and B, timed in the same process,
alternating call by call (as benchmarks.dwconv_ab does for f32-dwconv), on a native SIMD level of this machine.

    python -m benchmarks.conv_direct_ab HEAD . -t x86_64
    python -m benchmarks.conv_direct_ab HEAD . -t x86_64-avx512 --shape 49,10,1,10,4,2,4,1,5,2,64

A shape is H,W,C,KH,KW,STRIDE,PAD_TOP,PAD_LEFT,PAD_BOTTOM,PAD_RIGHT,OUT_CHANNELS (ONNX's pads order), ReLU
after it; the panel width is mlcc's for the target (mlcc.ops._conv_direct.panel_width), the entry point the one
a model of that layer links. Without --shape: the MLPerf Tiny stems (DS-CNN's 10x4, VWW's and ResNet-8's 3x3)
and a 7x7 stride-2 one. Each version is compiled with the target's flags, as a model's kernels are. Times are
the thread's CPU time per call, medians and minima of the rounds; outputs are compared bit for bit. Time a
version against itself first: the ratios it reads are the noise floor (0.89-1.00 under load). Confirm a win
inside the models too (mlcc bench --profile, alternating builds): clang compiles this kernel's entry points
as one large inlined function each, and a change read 0.92 here on ResNet-8's stem but 1.23-1.30 in the model.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.gemm_ab import _runtime_of, _zig, native_ab_arguments, native_ab_target
from mlcc.ops._conv_direct import lanes, panel_width
from mlcc.toolchain import target_flags

# DS-CNN's, VWW's and ResNet-8's stems, and an ImageNet 7x7 stride-2 one
DEFAULT_SHAPES = ("49,10,1,10,4,2,4,1,5,2,64", "96,96,3,3,3,2,1,1,1,1,8", "32,32,3,3,3,1,1,1,1,1,16",
                  "224,224,3,7,7,2,3,3,3,3,64")
# every function conv-direct-nhwc.c defines, renamed per version so both link into one program
ENTRY_POINTS = [f"mlcc_f32_conv_direct_nhwc_{n}v{kind}" for n in (1, 2, 3, 4) for kind in ("", "_permuted")]

HARNESS = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mlcc/kernels/f32-conv.h"

void conv_A(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void conv_B(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static float *aligned(size_t n) { return aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64); }

int main(int argc, char **argv)
{
    size_t v[13];
    (void)argc;
    for (int i = 0; i < 13; ++i) v[i] = (size_t)atol(argv[i + 1]);
    const size_t h = v[0], w = v[1], c = v[2], kh = v[3], kw = v[4], s = v[5], oc = v[10], nr = v[11];
    const int rounds = (int)v[12];
    const size_t oh = (h + v[6] + v[8] - kh) / s + 1, ow = (w + v[7] + v[9] - kw) / s + 1;
    const size_t k = kh * kw * c, panels = (oc + nr - 1) / nr;
    const struct mlcc_f32_conv_geometry g = {{1, h, w}, {1, oh, ow}, {1, kh, kw}, {1, s, s}, {1, 1, 1}, {0, v[6], v[7]}};
    const struct mlcc_f32_epilogue e = {MLCC_ACTIVATION_RELU, 0.0f, 0.0f, NULL, 0u, 0u};
    float *x = aligned(h * w * c), *wt = aligned(panels * nr * k), *bias = aligned(oc);
    float *y_a = aligned(oh * ow * oc), *y_b = aligned(oh * ow * oc);
    double *t_a = malloc((size_t)rounds * sizeof(double)), *t_b = malloc((size_t)rounds * sizeof(double));
    for (size_t i = 0; i < h * w * c; ++i) x[i] = (float)(i * 7919u % 1000u) / 500.0f - 1.0f;
    for (size_t i = 0; i < panels * nr * k; ++i) wt[i] = (float)(i * 31u % 100u) / 50.0f - 1.0f;
    for (size_t i = 0; i < oc; ++i) bias[i] = 0.01f * (float)i;
    /* calls per timing: about 2 million multiply-adds, so a small layer is not all clock reads */
    const size_t calls = 1u + (size_t)(2e6 / ((double)oh * (double)ow * (double)oc * (double)k));
    for (int r = -2; r < rounds; ++r) {  /* two untimed rounds first; A first in even rounds, B in odd */
        for (int side = 0; side < 2; ++side) {
            const int b = (side + (r & 1)) & 1;
            const double t0 = now();
            for (size_t i = 0; i < calls; ++i)
                (b ? conv_B : conv_A)(&g, c, c, NULL, oc, nr, x, wt, bias, b ? y_b : y_a, oc, &e);
            const double t = (now() - t0) / (double)calls;
            if (r >= 0) (b ? t_b : t_a)[r] = t;
        }
    }
    qsort(t_a, (size_t)rounds, sizeof(double), by_value);
    qsort(t_b, (size_t)rounds, sizeof(double), by_value);
    printf("%g %g %g %g %d\n", 1e6 * t_a[0], 1e6 * t_a[rounds / 2], 1e6 * t_b[0], 1e6 * t_b[rounds / 2],
           memcmp(y_a, y_b, oh * ow * oc * sizeof(float)) == 0);
    return 0;
}
"""


def _build(flags: list[str], isa: str, vectors: int, runtimes: dict[str, Path], out: Path) -> None:
    """Both versions' conv-direct-nhwc.c, their functions renamed apart (the entry point for `vectors` to
    conv_A and conv_B), and the harness."""
    objects = []
    for side, runtime in runtimes.items():
        obj = out.parent / f"{side}-conv-direct.o"
        names = [f"-D{name}__{isa}={name}_{side}" for name in ENTRY_POINTS if name != f"mlcc_f32_conv_direct_nhwc_{vectors}v"]
        _zig([*flags, "-std=c99", "-O2", "-fno-math-errno", f"-I{runtime / 'include'}", *names,
              f"-Dmlcc_f32_conv_direct_nhwc_{vectors}v__{isa}=conv_{side}",
              f"-Dmlcc_f32_conv_direct_nhwc__{isa}=conv_direct_{side}",
              f"-Dmlcc_f32_conv_direct_nhwc__reference=conv_reference_{side}", "-c",
              str(runtime / "kernels" / "f32-conv" / "conv-direct-nhwc.c"), "-o", str(obj)])
        objects.append(str(obj))
    harness = out.parent / "harness.c"
    harness.write_text(HARNESS)
    _zig([*flags, "-std=c11", "-O2", f"-I{runtimes['A'] / 'include'}", str(harness), *objects, "-o", str(out)])


def parse_shape(p: argparse.ArgumentParser, text: str) -> tuple[int, ...]:
    parts = text.split(",")
    if len(parts) != 11 or not all(x.isdigit() for x in parts) or any(int(parts[i]) == 0 for i in (0, 1, 2, 3, 4, 5, 10)):
        p.error(f"--shape {text!r}: want H,W,C,KH,KW,STRIDE,PAD_TOP,PAD_LEFT,PAD_BOTTOM,PAD_RIGHT,OUT_CHANNELS "
                "(integers, sizes and stride positive)")
    shape = tuple(map(int, parts))
    h, w, _, kh, kw, _, top, left, bottom, right, _ = shape
    if h + top + bottom < kh or w + left + right < kw:
        p.error(f"--shape {text!r}: the window is larger than the padded input")
    return shape


def main(argv: list[str] | None = None) -> int:
    p = native_ab_arguments("python -m benchmarks.conv_direct_ab", __doc__.split("\n\n")[0],
                            "H,W,C,KH,KW,S,PT,PL,PB,PR,OC", "a layer, repeatable [the MLPerf Tiny stems and a 7x7 one]")
    args = p.parse_args(argv)
    target_name, target, isa = native_ab_target(p, args)
    shapes = [parse_shape(p, text) for text in (args.shape or DEFAULT_SHAPES)]
    print(f"mlcc_f32_conv_direct_nhwc_<n>v__{isa} on {target_name}: A = {args.a}, B = {args.b}; {args.rounds} "
          f"alternating timings each, thread CPU time per call")
    print("| H x W x C, KH x KW / stride, pads, out channels (panel) | A min us | A median us | B min us "
          "| B median us | B/A median | outputs |")
    print("|---|---:|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="mlcc-conv-direct-ab-") as tmp:
        runtimes = {side: _runtime_of(version, Path(tmp) / side) for side, version in (("A", args.a), ("B", args.b))}
        programs: dict[int, Path] = {}
        for shape in shapes:
            h, w, c, kh, kw, s, top, left, bottom, right, oc = shape
            nr = panel_width(target, oc)
            vectors = nr // lanes(target)
            if vectors not in programs:
                programs[vectors] = Path(tmp) / f"ab{vectors}"
                _build(target_flags(target), isa, vectors, runtimes, programs[vectors])
            cmd = [str(programs[vectors]), *map(str, (*shape, nr, args.rounds))]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
            a_min, a_med, b_min, b_med = map(float, out[:4])
            print(f"| {h}x{w}x{c}, {kh}x{kw} / {s}, {top},{left},{bottom},{right}, {oc} ({nr}) | {a_min:.2f} "
                  f"| {a_med:.2f} | {b_min:.2f} | {b_med:.2f} | {b_med / a_med:.3f} "
                  f"| {'bit-identical' if out[4] == '1' else 'differ'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
