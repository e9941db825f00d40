"""python -m benchmarks.wasm_step_ceiling: what bounds one k step of the SIMD128 4x8 GEMM tile in wasmtime: its
8 multiplies and 8 adds alone (operands in registers), then with its 6 loads (2 of B, 4 of A broadcast) over a
stream of 96-byte steps whose span grows from L1 to memory. Cranelift compiles the loop as the tile's (the same
22 vector instructions, no spill; 6 integer ones for the stream where the tile has 4, in both rows alike); each
figure is the best of 5 runs of 10^7 steps, thread CPU time, as GFLOP/s (64 flops a step).

    python -m benchmarks.wasm_step_ceiling

On the AMD EPYC Zen 4 of benchmarks/results/wasm.md (Zen 4, SIMD128 on 128-bit SSE/AVX ops): 54-58 GFLOP/s
alone, 36-41 with the 6 loads at every span: the loads, not cache misses, take a third of the rate, so the tile
is bound by its instructions, and no blocking can speed it up; fewer instructions a flop can (a fused
multiply-add; a wider register tile, which Cranelift spills). V8 is left out: in this loop it spills an
accumulator every step (15 allocatable vector registers), which it does not in the tile.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mlcc.toolchain import zig

SOURCE = r"""
#include <wasm_simd128.h>

/* acc[2i + j] += a_i * b_j, the 4x8 tile's step, its operands loaded from the stream (LOADS) or in registers */
#define STEP_LOOP(LOADS)                                                                                \
    v128_t acc[8];                                                                                      \
    for (int i = 0; i < 8; ++i) acc[i] = wasm_f32x4_splat(0.0f);                                        \
    const v128_t rb0 = wasm_v128_load(buf), rb1 = wasm_v128_load(buf + 4);                              \
    v128_t ra[4];                                                                                       \
    for (int i = 0; i < 4; ++i) ra[i] = wasm_v128_load(buf + 8 + 4 * i);                                \
    int s = 0;                                                                                          \
    for (int p = 0; p < iters; ++p) {                                                                   \
        const float *q = buf + s * 24;                                                                  \
        s = s + 1 == span ? 0 : s + 1;                                                                  \
        __asm__("" : "+r"(q));                                                                          \
        const v128_t b0 = LOADS ? wasm_v128_load(q) : rb0, b1 = LOADS ? wasm_v128_load(q + 4) : rb1;    \
        for (int i = 0; i < 4; ++i) {                                                                   \
            const v128_t ai = LOADS ? wasm_v128_load(q + 8 + 4 * i) : ra[i];                            \
            acc[2 * i] = wasm_f32x4_add(acc[2 * i], wasm_f32x4_mul(ai, b0));                            \
            acc[2 * i + 1] = wasm_f32x4_add(acc[2 * i + 1], wasm_f32x4_mul(ai, b1));                    \
        }                                                                                               \
        __asm__("" : "+r"(s));                                                                          \
    }                                                                                                   \
    v128_t t = acc[0];                                                                                  \
    for (int i = 1; i < 8; ++i) t = wasm_f32x4_add(t, acc[i]);                                          \
    return wasm_f32x4_extract_lane(t, 0);

#define EXPORT(name) __attribute__((export_name(#name))) float name(int iters, const float *buf, int span)
EXPORT(arith) { STEP_LOOP(0) }
EXPORT(step) { STEP_LOOP(1) }
"""

STEPS = 10_000_000
BUF = 65536                    # the stream's byte address in linear memory
# (row label, export, span in steps of 96 bytes)
CASES = [("8 multiplies + 8 adds, operands in registers", "arith", 64),
         ("the step with its 6 loads, 6 KB span (L1)", "step", 64),
         ("the step, 96 KB span (L2)", "step", 1024),
         ("the step, 1.5 MB span (L3)", "step", 16384),
         ("the step, 18 MB span (memory)", "step", 200_000)]


def _wasmtime(module: Path) -> list[float]:
    import wasmtime

    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    exports = wasmtime.Instance(store, wasmtime.Module.from_file(engine, str(module)), []).exports(store)
    out = []
    for _, name, span in CASES:
        best = float("inf")
        for _ in range(5):
            t = time.thread_time()
            exports[name](store, STEPS, BUF, span)
            best = min(best, time.thread_time() - t)
        out.append(best)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.wasm_step_ceiling", description=__doc__.split("\n\n")[0])
    p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mlcc-ceiling-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "ceiling.c").write_text(SOURCE)
        module = tmp / "ceiling.wasm"
        subprocess.run([*zig("cc"), "-target", "wasm32-freestanding", "-msimd128", "-O2", "-nostdlib",
                        "-Wl,--no-entry", "-Wl,--export-memory", "-Wl,--initial-memory=33554432", str(tmp / "ceiling.c"),
                        "-o", str(module)], check=True, capture_output=True)
        seconds = _wasmtime(module)
    print("| 4x8 tile's k step | wasmtime GFLOP/s |")
    print("|---|---:|")
    for (label, _, _), t in zip(CASES, seconds):
        print(f"| {label} | {STEPS * 64 / t / 1e9:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
