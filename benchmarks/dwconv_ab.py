"""python -m benchmarks.dwconv_ab: f32-dwconv's channels-last kernel from two versions of runtime_c, A and B,
timed in the same process, alternating call by call (as benchmarks.gemm_ab does for f32-gemm), on a native
SIMD level of this machine.

    python -m benchmarks.dwconv_ab HEAD . -t x86_64 --shape 112,112,32,1,clip --shape 25,5,64,1,relu
    python -m benchmarks.dwconv_ab HEAD~2 HEAD -t x86_64-avx512

A shape is H,W,C,STRIDE,ACTIVATION: a 3x3 depthwise convolution padded by one on every side (MobileNet's,
DS-CNN's, ShuffleNet's), activation none, relu or clip (0, 6). Without --shape: those three networks' layers.
Times are the thread's CPU time per call, medians and minima of the rounds; outputs are compared bit for bit.
Time a version against itself first: the ratios it reads are the noise floor.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.gemm import PRELUDE
from benchmarks.gemm_ab import _runtime_of, _zig, native_ab_arguments, native_ab_target
from mlcc.toolchain import target_flags

# DS-CNN, MobileNetV2 and ShuffleNet's depthwise layers (H, W, C, stride, activation)
DEFAULT_SHAPES = ("25,5,64,1,relu", "112,112,32,1,clip", "112,112,96,2,clip", "56,56,144,1,clip",
                  "56,56,144,2,clip", "28,28,192,1,clip", "14,14,576,1,clip", "7,7,960,1,clip",
                  "56,56,112,2,none", "28,28,136,1,none", "14,14,272,1,none", "7,7,544,1,none")
ACTIVATIONS = ("none", "relu", "clip")  # the harness's activations[], in its order

HARNESS = PRELUDE + r"""
#include "mlcc/kernels/f32-dwconv.h"

#define DWCONV(name) void name(const struct mlcc_f32_conv_geometry *, size_t, const float *, const float *, \
                               const float *, float *, const struct mlcc_f32_epilogue *)
DWCONV(dwconv_A);
DWCONV(dwconv_B);

int main(int argc, char **argv)
{
    const size_t h = (size_t)atol(argv[1]), w = (size_t)atol(argv[2]), c = (size_t)atol(argv[3]);
    const size_t s = (size_t)atol(argv[4]);
    static const enum mlcc_activation activations[] = {MLCC_ACTIVATION_NONE, MLCC_ACTIVATION_RELU, MLCC_ACTIVATION_CLIP};
    const int act = atoi(argv[5]), rounds = atoi(argv[6]);
    const size_t oh = (h - 1) / s + 1, ow = (w - 1) / s + 1;
    const struct mlcc_f32_conv_geometry g = {{1, h, w}, {1, oh, ow}, {1, 3, 3}, {1, s, s}, {1, 1, 1}, {0, 1, 1}};
    const struct mlcc_f32_epilogue e = {activations[act], 0.0f, 6.0f, NULL, 0u, 0u};
    float *x = aligned(h * w * c), *wt = aligned(9 * c), *bias = aligned(c);
    float *y_a = aligned(oh * ow * c), *y_b = aligned(oh * ow * c);
    double *t_a = malloc((size_t)rounds * sizeof(double)), *t_b = malloc((size_t)rounds * sizeof(double));
    for (size_t i = 0; i < h * w * c; ++i) x[i] = (float)(i * 7919u % 1000u) / 500.0f - 1.0f;
    for (size_t i = 0; i < 9 * c; ++i) wt[i] = (float)(i * 31u % 100u) / 50.0f - 1.0f;
    for (size_t i = 0; i < c; ++i) bias[i] = 0.01f * (float)i;
    /* calls per timing: about 2 million multiply-adds, so a small layer is not all clock reads */
    const size_t calls = 1u + (size_t)(2e6 / ((double)oh * (double)ow * (double)c * 9.0));
    for (int r = -2; r < rounds; ++r) {  /* two untimed rounds first; A first in even rounds, B in odd */
        for (int side = 0; side < 2; ++side) {
            const int b = (side + (r & 1)) & 1;
            const double t0 = cpu_seconds();
            for (size_t i = 0; i < calls; ++i) (b ? dwconv_B : dwconv_A)(&g, c, x, wt, bias, b ? y_b : y_a, &e);
            const double t = (cpu_seconds() - t0) / (double)calls;
            if (r >= 0) (b ? t_b : t_a)[r] = t;
        }
    }
    qsort(t_a, (size_t)rounds, sizeof(double), by_value);
    qsort(t_b, (size_t)rounds, sizeof(double), by_value);
    printf("%g %g %g %g %d\n", 1e6 * t_a[0], 1e6 * t_a[rounds / 2], 1e6 * t_b[0], 1e6 * t_b[rounds / 2],
           memcmp(y_a, y_b, oh * ow * c * sizeof(float)) == 0);
    return 0;
}
"""


def _build(flags: list[str], isa: str, runtimes: dict[str, Path], out: Path) -> None:
    """Both versions' dwconv-nhwc.c, the entry point renamed dwconv_A and dwconv_B, and the harness."""
    objects = []
    for side, runtime in runtimes.items():
        obj = out.parent / f"{side}-dwconv.o"
        _zig([*flags, "-std=c99", "-O2", "-fno-math-errno", f"-I{runtime / 'include'}",
              f"-Dmlcc_f32_dwconv_nhwc__{isa}=dwconv_{side}",
              f"-Dmlcc_f32_dwconv_nhwc_rows__{isa}=dwconv_rows_{side}", "-c",
              str(runtime / "kernels" / "f32-dwconv" / "dwconv-nhwc.c"), "-o", str(obj)])
        objects.append(str(obj))
    harness = out.parent / "harness.c"
    harness.write_text(HARNESS)
    _zig([*flags, "-std=c11", "-O2", f"-I{runtimes['A'] / 'include'}", str(harness), *objects, "-o", str(out)])


def parse_shape(p: argparse.ArgumentParser, text: str) -> tuple[int, int, int, int, str]:
    parts = text.split(",")
    if len(parts) != 5 or not all(x.isdigit() and int(x) > 0 for x in parts[:4]) or parts[4] not in ACTIVATIONS:
        p.error(f"--shape {text!r}: want H,W,C,STRIDE,ACTIVATION (positive integers; {', '.join(ACTIVATIONS)})")
    return int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]), parts[4]


def main(argv: list[str] | None = None) -> int:
    p = native_ab_arguments("python -m benchmarks.dwconv_ab", __doc__.split("\n\n")[0], "H,W,C,S,ACT",
                            "a layer, repeatable [DS-CNN's, MobileNetV2's, ShuffleNet's]")
    args = p.parse_args(argv)
    target_name, target, isa = native_ab_target(p, args)
    shapes = [parse_shape(p, text) for text in (args.shape or DEFAULT_SHAPES)]
    with tempfile.TemporaryDirectory(prefix="mlcc-dwconv-ab-") as tmp:
        runtimes = {side: _runtime_of(version, Path(tmp) / side) for side, version in (("A", args.a), ("B", args.b))}
        program = Path(tmp) / "ab"
        _build(target_flags(target), isa, runtimes, program)
        print(f"mlcc_f32_dwconv_nhwc__{isa} on {target_name}: A = {args.a}, B = {args.b}; {args.rounds} alternating "
              f"timings each, thread CPU time per call")
        print("| H x W x C, stride, activation | A min us | A median us | B min us | B median us | B/A median "
              "| outputs |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for h, w, c, s, act in shapes:
            cmd = [str(program), *map(str, (h, w, c, s, ACTIVATIONS.index(act), args.rounds))]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
            a_min, a_med, b_min, b_med = map(float, out[:4])
            print(f"| {h}x{w}x{c}, {s}, {act} | {a_min:.2f} | {a_med:.2f} | {b_min:.2f} | {b_med:.2f} "
                  f"| {b_med / a_med:.3f} | {'bit-identical' if out[4] == '1' else 'differ'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
