"""The load-time weight transform of f32-winograd (mlcc_f32_winograd_transform_weights, which prepares
Winograd's weights in the arena under the weights policy "model") against the build-time one
(mlcc/ops/_winograd.py, packed by _gemm.pack_b), natively and in wasmtime. The whole convolution with
prepared weights is checked against onnxruntime in tests/ops/test_conv_winograd.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.kernels.simd_harness import kernel_sources, run_harness

# (groups, out channels a group, in channels a group, kernel, stride, nr): panels cut short (10 of 16), two
# groups, and a 5x5 kernel's pieces at stride 1 and its phases at stride 2
WEIGHT_CASES = [(1, 10, 5, 3, 1, 16), (2, 8, 3, 3, 1, 4), (1, 7, 4, 5, 1, 8), (2, 6, 3, 5, 2, 16)]


def _c_floats(values) -> str:
    return ", ".join(f"{float(v).hex()}f" for v in values)


def _weights_harness(path: Path) -> None:
    """A C program running mlcc_f32_winograd_transform_weights on each case and counting the floats that
    differ from the build-time transform (mlcc/ops/_winograd.py, packed by _gemm.pack_b) by more than an ulp,
    and those that differ at all."""
    from mlcc.ops import _gemm, _winograd

    rng = np.random.default_rng(7)
    parts = ['#include <stdio.h>\n#include <string.h>\n#include "mlcc/kernels/f32-winograd.h"\n',
             "static int ulps(float a, float b)\n{\n    int ia, ib;\n    memcpy(&ia, &a, sizeof ia);\n"
             "    memcpy(&ib, &b, sizeof ib);\n    return ia > ib ? ia - ib : ib - ia;\n}\n"]
    calls = []
    for index, (groups, out, inp, kernel, stride, nr) in enumerate(WEIGHT_CASES):
        w = (rng.standard_normal((groups * out, inp, kernel, kernel)) / kernel).astype(np.float32)
        want = _gemm.pack_b(_winograd.transformed_weights(w, groups, stride), nr).ravel()
        parts.append(f"static const float w{index}[] = {{ {_c_floats(w.ravel())} }};\n"
                     f"static const float want{index}[] = {{ {_c_floats(want)} }};\n"
                     f"static float got{index}[{want.size}];\n")
        calls.append(f"    mlcc_f32_winograd_transform_weights(w{index}, {groups}u, {out}u, {inp}u, {kernel}u, "
                     f"{stride}u, {nr}u, got{index});\n"
                     f"    for (size_t i = 0; i < {want.size}u; ++i) {{\n"
                     f"        far += ulps(got{index}[i], want{index}[i]) > 1;\n"
                     f"        near += got{index}[i] != want{index}[i];\n        total += 1;\n    }}\n")
    parts.append("int main(void)\n{\n    size_t far = 0, near = 0, total = 0;\n" + "".join(calls)
                 + '    printf("%zu of %zu floats past an ulp, %zu differ\\n", far, total, near);\n'
                 "    return 0;\n}\n")
    path.write_text("".join(parts))


@pytest.mark.parametrize("target_name", ["x86_64", "wasm32"])
def test_weight_transform_matches_the_build_time_one(target_name, tmp_path):
    """The load-time weight transform (weights prepared in the arena) computes what the build stores under
    --optimize-for speed: every float within an ulp (in practice equal)."""
    harness = tmp_path / "winograd_weights.c"
    _weights_harness(harness)
    output = run_harness(target_name, harness, kernel_sources("f32-winograd"), tmp_path)
    far, _, total, *rest = output.split()
    assert far == "0" and int(total) > 0, output
