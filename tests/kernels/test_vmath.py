"""The vector math (runtime_c/include/mlcc/simd/math.h) and its scalar forms (math-scalar.h) against the C
library in double, on every ISA this machine runs: vmath_sweep.c measures each function over every
997th float (the whole range, both signs), dense sweeps of [-12, 12] and of the saturation edges (under
qemu every 32749th float and a fifth of the dense points), and NaN and the infinities. The bounds below are the ones mlcc/simd/math.h states.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mlcc.targets import resolve
from tests.kernels.simd_harness import run_harness

HARNESS = Path(__file__).with_name("vmath_sweep.c")

# function: (max ulp where x and the result are normal floats, max abs error where either is subnormal)
# exp_nonpositive (over x <= 0) flushes what would be subnormal results to zero
ULP = {"exp": (1.0, 2.0 ** -149), "sigmoid": (2.5, 2.0 ** -149), "tanh": (5.5, 0.0), "erf": (6.5, 2.0 ** -148),
       "exp_nonpositive": (1.0, 2.0 ** -126)}
GELU_SCALED = 2.5e-7  # abs error / max(|x|, 1)
# Armv7 NEON: subnormals flush to zero, and division is a refined reciprocal estimate
ARMV7_ULP = {"exp": 1.0, "sigmoid": 3.5, "tanh": 6.0, "erf": 6.5, "exp_nonpositive": 1.0}
FLUSHED = 2.0 ** -125  # a flushed subnormal x, or result

TARGETS = ["x86_64-avx512", "x86_64", "x86_64-baseline", "wasm32", "wasm32-scalar", "aarch64", "armv7", "riscv64"]
LINE = re.compile(r"^(\w+) (scalar|vector) ulp (\S+) at \S+ tiny_abs (\S+) scaled_abs (\S+) at \S+ special_wrong (\d+)$")


def _sweep(target_name: str, tmp_path: Path) -> list[tuple]:
    target = resolve(target_name)
    fewer = ("32749", "40001") if target.runner == "qemu" else ()  # emulated: about 20x slower
    output = run_harness(target, HARNESS, [], tmp_path, args=fewer)
    rows = [m.groups() for m in map(LINE.match, output.splitlines()) if m]
    vector = target.name not in ("x86_64-baseline", "wasm32-scalar")
    assert len(rows) == 7 * (2 if vector else 1), output
    return rows


@pytest.mark.parametrize("target_name", TARGETS)
def test_accuracy(target_name, tmp_path):
    failures = []
    for name, form, ulp, tiny_abs, scaled_abs, special_wrong in _sweep(target_name, tmp_path):
        armv7_vector = target_name == "armv7" and form == "vector"
        if int(special_wrong):
            failures.append(f"{name} {form}: {special_wrong} special values wrong")
        if name.startswith("gelu"):
            if float(scaled_abs) > GELU_SCALED:
                failures.append(f"{name} {form}: abs error / max(|x|, 1) {scaled_abs} > {GELU_SCALED}")
            continue
        max_ulp, max_tiny = ULP[name]
        if armv7_vector:
            max_ulp, max_tiny = ARMV7_ULP[name], max(max_tiny, FLUSHED)
        if float(ulp) > max_ulp:
            failures.append(f"{name} {form}: {ulp} ulp > {max_ulp}")
        if float(tiny_abs) > max_tiny:
            failures.append(f"{name} {form}: abs error {tiny_abs} on subnormal results > {max_tiny:.3g}")
    assert not failures, f"{target_name}: " + "; ".join(failures)
