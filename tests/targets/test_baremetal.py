"""Bare-metal targets: the runtime's own math (ulp sweeps against higher-precision references), the
freestanding code path run on x86-64 with no C library against onnxruntime, Cortex-M builds with nothing
left to link but the compiler runtime, the firmware sample, and section sizes in report.json."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from cffi import FFI

from mlcc import paths, sizes
from mlcc.errors import UnsupportedError
from mlcc.pipeline import BuildOptions, build
from mlcc.verify import reference_outputs
from tests.golden import check_model, node_model, rand

ROOT = Path(__file__).resolve().parents[2]
FREESTANDING = "x86_64-freestanding"  # the bare-metal code path, runnable here
CORTEX_M = ["cortex-m4", "cortex-m55"]
RNG = np.random.default_rng(7)


def _spread(lo: float, hi: float, n: int = 6000) -> np.ndarray:
    """Evenly spaced and random points of [lo, hi]."""
    return np.concatenate([np.linspace(lo, hi, n), RNG.uniform(lo, hi, n)])


def _magnitudes(lo_exp: float, hi_exp: float, signed: bool = True, n: int = 6000) -> np.ndarray:
    """Log-uniform magnitudes 10^[lo_exp, hi_exp], both signs when signed."""
    x = 10.0 ** RNG.uniform(lo_exp, hi_exp, n)
    return np.concatenate([x, -x]) if signed else x


def _round_half_away(x):
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.copysign(1.0, x), 0.0)


_erf = np.vectorize(math.erf)
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5])

# |x| past the Cody-Waite range of sin, cos and tan, deterministic so the random draws of later inputs stay as they were
_HUGE = np.concatenate([np.geomspace(1e3, 3e38, 6000), -np.geomspace(1e3, 3e38, 6000)])

# name: (stated max error in ulps, reference in float64, inputs)
FLOAT_UNARY = {
    "sqrtf": (0.5, np.sqrt, _magnitudes(-45, 38, signed=False)),
    "fabsf": (0, np.abs, _spread(-1e6, 1e6)),
    "floorf": (0, np.floor, np.concatenate([_spread(-4, 4), _spread(-1e8, 1e8)])),
    "ceilf": (0, np.ceil, np.concatenate([_spread(-4, 4), _spread(-1e8, 1e8)])),
    "truncf": (0, np.trunc, np.concatenate([_spread(-4, 4), _spread(-1e8, 1e8)])),
    "rintf": (0, np.rint, np.concatenate([_spread(-4, 4), np.arange(-8, 8) + 0.5, _spread(-1e8, 1e8)])),
    "roundf": (0, _round_half_away, np.concatenate([_spread(-4, 4), np.arange(-8, 8) + 0.5, _spread(-1e8, 1e8)])),
    "expf": (1, np.exp, _spread(-104, 89)),
    "exp2f": (1, np.exp2, _spread(-150, 128)),
    "expm1f": (1.5, np.expm1, np.concatenate([_spread(-20, 89), _magnitudes(-30, 0)])),
    "logf": (1, np.log, np.concatenate([_magnitudes(-45, 38, signed=False), _spread(0.5, 2)])),
    "log2f": (2, np.log2, np.concatenate([_magnitudes(-45, 38, signed=False), _spread(0.5, 2)])),
    "log10f": (2, np.log10, np.concatenate([_magnitudes(-45, 38, signed=False), _spread(0.5, 2)])),
    "log1pf": (1.5, np.log1p, np.concatenate([_spread(-1, 1), _magnitudes(-30, 38, signed=False), -_magnitudes(-30, 0, signed=False)])),
    "sinf": (2.5, np.sin, np.concatenate([_spread(-10, 10), _magnitudes(-20, 6), _HUGE])),
    "cosf": (2.5, np.cos, np.concatenate([_spread(-10, 10), _magnitudes(-20, 6), _HUGE])),
    "tanf": (3, np.tan, np.concatenate([_spread(-10, 10), _magnitudes(-20, 6), _HUGE])),
    "asinf": (5, np.arcsin, _spread(-1, 1)),
    "acosf": (5, np.arccos, _spread(-1, 1)),
    "atanf": (2, np.arctan, np.concatenate([_spread(-4, 4), _magnitudes(-20, 30)])),
    "sinhf": (2, np.sinh, np.concatenate([_spread(-90, 90), _magnitudes(-20, 0)])),
    "coshf": (2, np.cosh, _spread(-90, 90)),
    "tanhf": (2, np.tanh, np.concatenate([_spread(-12, 12), _magnitudes(-20, 0)])),
    "asinhf": (2, np.arcsinh, np.concatenate([_spread(-4, 4), _magnitudes(-20, 38)])),
    "acoshf": (2, np.arccosh, np.concatenate([_spread(1, 4), _magnitudes(0, 38, signed=False)])),
    "atanhf": (2, np.arctanh, np.concatenate([_spread(-1, 1), _magnitudes(-20, 0)])),
    "erff": (2, _erf, np.concatenate([_spread(-5, 5), _magnitudes(-20, 0)])),
}
FLOAT_BINARY = {
    "fmodf": (0, np.fmod, (_magnitudes(-10, 10), _magnitudes(-10, 10))),
    "fminf": (0, np.fmin, (_spread(-10, 10), _spread(-10, 10))),
    "fmaxf": (0, np.fmax, (_spread(-10, 10), _spread(-10, 10))),
    "copysignf": (0, np.copysign, (_spread(-10, 10), _spread(-10, 10))),
    "powf": (1, np.power, (np.concatenate([_magnitudes(-3, 3, signed=False), -_magnitudes(-3, 3, signed=False)]),
                           np.concatenate([RNG.uniform(-20, 20, 6000), RNG.integers(-30, 30, 6000)]))),
}
DOUBLE_UNARY = {  # references in long double (x87: 64-bit significands)
    "sqrt": (0.5, np.sqrt, _magnitudes(-300, 300, signed=False)),
    "floor": (0, np.floor, _spread(-1e17, 1e17)),
    "ceil": (0, np.ceil, _spread(-4, 4)),
    "trunc": (0, np.trunc, _spread(-4, 4)),
    "rint": (0, np.rint, np.concatenate([_spread(-4, 4), np.arange(-8, 8) + 0.5])),
    "round": (0, _round_half_away, np.concatenate([_spread(-4, 4), np.arange(-8, 8) + 0.5])),
    "exp": (1, np.exp, _spread(-745, 709)),
    "expm1": (1.5, np.expm1, np.concatenate([_spread(-40, 709), _magnitudes(-30, 0)])),
    "log": (1.5, np.log, np.concatenate([_magnitudes(-300, 300, signed=False), _spread(0.5, 2)])),
    "log1p": (1.5, np.log1p, np.concatenate([_spread(-1, 1), _magnitudes(-30, 300, signed=False)])),
    "sin": (2.5, np.sin, np.concatenate([_spread(-10, 10), _magnitudes(-20, 6)])),
    "cos": (2.5, np.cos, np.concatenate([_spread(-10, 10), _magnitudes(-20, 6)])),
    "tanh": (2, np.tanh, np.concatenate([_spread(-25, 25), _magnitudes(-20, 0)])),
}
DOUBLE_BINARY = {
    "fmod": (0, np.fmod, (_magnitudes(-100, 100), _magnitudes(-100, 100))),
    "fmin": (0, np.fmin, (_spread(-10, 10), _spread(-10, 10))),
    "fmax": (0, np.fmax, (_spread(-10, 10), _spread(-10, 10))),
}
GROUPS = [("f1", "float", 1, FLOAT_UNARY), ("f2", "float", 2, FLOAT_BINARY),
          ("d1", "double", 1, DOUBLE_UNARY), ("d2", "double", 2, DOUBLE_BINARY)]


def _driver() -> str:
    lines = ["#include <stddef.h>", '#include "mlcc/math.h"']
    for tag, ctype, arity, table in GROUPS:
        params = ", ".join([ctype] * arity)
        lines.append(f"static {ctype} (*const {tag}[])({params}) = {{ {', '.join(f'mlcc_{n}' for n in table)} }};")
        args = "x[k]" if arity == 1 else "x[k], y[k]"
        lines.append(f"void sweep_{tag}(int i, const {ctype} *x, const {ctype} *y, {ctype} *out, size_t n) "
                     f"{{ (void)y; for (size_t k = 0; k < n; ++k) out[k] = {tag}[i]({args}); }}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module", params=["instruction sqrt", "software sqrt"])
def mathlib(request, tmp_path_factory):
    """The freestanding math compiled for x86-64 with no C library (and again with the software square
    root that single-precision FPUs use for double)."""
    folder = tmp_path_factory.mktemp("mathlib")
    (folder / "driver.c").write_text(_driver())
    runtime = paths.runtime_dir()
    sources = [runtime / "kernels" / "freestanding" / f for f in ("math.c", "math-double.c")]
    defines = ["-DMLCC_SOFTWARE_SQRT"] if request.param == "software sqrt" else []
    lib = folder / "libmath.so"
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-none", "-O2", "-fno-math-errno",
                    "-std=c99", "-Wall", "-Wextra", "-Werror", "-fPIC", "-shared", "-nostdlib", *defines,
                    f"-I{runtime / 'include'}", *map(str, sources), str(folder / "driver.c"), "-o", str(lib)], check=True)
    ffi = FFI()
    for tag, ctype, _, _ in GROUPS:
        ffi.cdef(f"void sweep_{tag}(int i, const {ctype} *x, const {ctype} *y, {ctype} *out, size_t n);")
    return ffi, ffi.dlopen(str(lib))


def _call(mathlib, tag, index, dtype, x, y=None):
    ffi, lib = mathlib
    x = np.ascontiguousarray(x, dtype=dtype)
    y = np.ascontiguousarray(x if y is None else y, dtype=dtype)
    out = np.empty_like(x)
    ctype = "float" if dtype == np.float32 else "double"
    getattr(lib, f"sweep_{tag}")(index, ffi.cast(f"{ctype} *", x.ctypes.data), ffi.cast(f"{ctype} *", y.ctypes.data),
                                 ffi.cast(f"{ctype} *", out.ctypes.data), x.size)
    return out


def _ulp_error(got: np.ndarray, ref: np.ndarray, dtype) -> float:
    """Max |got - ref| in ulps of the result type at ref (ref in higher precision); NaNs and infinities
    must match exactly."""
    finfo = np.finfo(dtype)
    ref_rounded = ref.astype(dtype)
    special = ~np.isfinite(ref_rounded)
    assert np.array_equal(np.isnan(got), np.isnan(ref_rounded)), "NaN where the reference has none (or the reverse)"
    assert np.array_equal(got[special & ~np.isnan(got)], ref_rounded[special & ~np.isnan(got)]), "infinities differ"
    finite = ~special
    ulp = np.maximum(np.spacing(np.abs(ref_rounded[finite])), finfo.smallest_subnormal).astype(ref.dtype)
    err = np.abs(got[finite].astype(ref.dtype) - ref[finite]) / ulp
    return float(err.max()) if err.size else 0.0


@pytest.mark.parametrize("tag, ctype, arity, table", GROUPS, ids=[g[0] for g in GROUPS])
def test_math_accuracy(mathlib, tag, ctype, arity, table):
    dtype = np.float32 if ctype == "float" else np.float64
    wide = np.float64 if ctype == "float" else np.longdouble
    report, failures = [], []
    for index, (name, (bound, reference, inputs)) in enumerate(table.items()):
        if arity == 1:
            x = np.concatenate([inputs, SPECIAL]).astype(dtype)
            got = _call(mathlib, tag, index, dtype, x)
            with np.errstate(all="ignore"):
                ref = np.asarray(reference(x.astype(wide)), dtype=wide)
        else:
            x, y = (np.asarray(a).astype(dtype) for a in inputs)
            got = _call(mathlib, tag, index, dtype, x, y)
            with np.errstate(all="ignore"):
                ref = np.asarray(reference(x.astype(wide), y.astype(wide)), dtype=wide)
        err = _ulp_error(got, ref, dtype)
        report.append(f"{name} {err:.3f}")
        if err > bound + 0.01:  # rounding of the reference itself
            failures.append(f"{name}: {err:.3f} ulp > {bound}")
    print(f"max ulp error ({tag}): " + ", ".join(report))
    assert not failures, failures


# --- the freestanding code path, run ------------------------------------------------------------
ACTIVATIONS = ["Exp", "Log", "Tanh", "Erf", "Sigmoid", "Softplus", "Sin", "Cos", "Sqrt", "Elu", "Mish", "Atan",
               "Asinh", "Floor", "Round"]


@pytest.mark.parametrize("op", ACTIVATIONS)
def test_unary_math_ops_without_libc(op, tmp_path):
    x = rand(3, 40, seed=3)
    if op in ("Log", "Sqrt"):
        x = np.abs(x) + 1e-3
    opset = 18 if op == "Mish" else 17
    check_model(node_model(op, {"x": x}, ["y"], opset=opset), {"x": x}, FREESTANDING, tmp_path, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op, attrs", [("Softmax", {"axis": -1}), ("LogSoftmax", {"axis": 1}), ("Gelu", {})])
def test_kernels_and_fused_math_without_libc(op, attrs, tmp_path):
    x = rand(4, 32, seed=5) * 4
    opset = 20 if op == "Gelu" else 17
    check_model(node_model(op, {"x": x}, ["y"], attrs, opset=opset), {"x": x}, FREESTANDING, tmp_path, rtol=1e-5, atol=1e-6)


def test_layer_norm_and_pow_without_libc(tmp_path):
    x, scale, bias = rand(2, 5, 16, seed=1), rand(16, seed=2), rand(16, seed=3)
    check_model(node_model("LayerNormalization", {"x": x}, ["y"], {"axis": -1}, initializers={"s": scale, "b": bias}),
                {"x": x}, FREESTANDING, tmp_path, rtol=1e-4, atol=1e-5)
    (tmp_path / "pow").mkdir()
    base, exponent = np.abs(rand(3, 8, seed=4)) + 0.1, rand(3, 8, seed=5) * 3
    check_model(node_model("Pow", {"a": base, "b": exponent}, ["y"]), {"a": base, "b": exponent},
                FREESTANDING, tmp_path / "pow", rtol=1e-5, atol=1e-6)


def test_sample_model_without_libc(tmp_path):
    model = onnx.load(str(ROOT / "samples" / "digits_cnn.onnx"))
    x = rand(*[d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim], seed=9)
    check_model(model, {model.graph.input[0].name: x}, FREESTANDING, tmp_path, rtol=1e-4, atol=1e-5)


def test_missing_library_function_is_refused_by_name(tmp_path):
    x = rand(2, 3, seed=1).astype(np.float64)  # double tan is not in the freestanding runtime
    path = tmp_path / "m.onnx"
    onnx.save(node_model("Tan", {"x": x}, ["y"]), str(path))
    with pytest.raises(UnsupportedError, match=r"tan_node.*Tan needs tan from the C library, which target cortex-m4 does not have"):
        build(path, BuildOptions(target="cortex-m4", out_dir=tmp_path / "out"))


# --- Cortex-M artifacts ---------------------------------------------------------------------------
def _symbols(archive: Path) -> tuple[set[str], set[str]]:
    """(defined, undefined) symbols over an archive's members, listed by llvm-nm."""
    out = subprocess.run(["llvm-nm", str(archive)], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[-2] == "U":
            undefined.add(parts[-1])
        elif len(parts) == 3:
            defined.add(parts[2])
    return defined, undefined - defined


@pytest.mark.skipif(subprocess.run(["which", "llvm-nm"], capture_output=True).returncode != 0, reason="needs llvm-nm")
@pytest.mark.parametrize("target", CORTEX_M)
def test_cortex_m_library_needs_only_the_compiler_runtime(target, tmp_path):
    out_dir, report = build(ROOT / "samples" / "digits_cnn.onnx", BuildOptions(target=target, out_dir=tmp_path / "out"))
    archive = out_dir / report["artifacts"]["static_library"]
    _, undefined = _symbols(archive)
    assert {s for s in undefined if not s.startswith("__aeabi_")} == set(), undefined
    size = report["size"]["artifacts"]["static_library"]
    assert size["code_bytes"] > 0 and size["rodata_bytes"] >= report["weights_bytes"] > 0
    assert report["code_bytes"]["static_library"] == size["code_bytes"]


@pytest.mark.skipif(subprocess.run(["which", "llvm-nm"], capture_output=True).returncode != 0, reason="needs llvm-nm")
def test_float_math_links_no_soft_double_on_a_single_precision_fpu(tmp_path):
    """Issue 22: a float32 model's Sin, Cos and Pow on Cortex-M4F (FPU single precision only) must not pull
    in the compiler runtime's software double arithmetic (__aeabi_d*) into the linked image."""
    x, e = (onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [4]) for n in ("x", "e"))
    z = onnx.helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [4])
    nodes = [onnx.helper.make_node("Sin", ["x"], ["s"]), onnx.helper.make_node("Cos", ["s"], ["c"]),
             onnx.helper.make_node("Pow", ["c", "e"], ["z"])]
    model = onnx.helper.make_model(onnx.helper.make_graph(nodes, "trig_pow", [x, e], [z]),
                                   opset_imports=[onnx.helper.make_opsetid("", 17)])
    path = tmp_path / "trig_pow.onnx"
    onnx.save(model, str(path))
    out_dir, report = build(path, BuildOptions(target="cortex-m4", out_dir=tmp_path / "out"))
    elf = out_dir / report["artifacts"]["firmware"]
    symbols = subprocess.run(["llvm-nm", str(elf)], capture_output=True, text=True, check=True).stdout.split()
    assert {"mlcc_sinf", "mlcc_cosf", "mlcc_powf"} <= set(symbols)  # the math is linked in, not elided
    assert [s for s in symbols if s.startswith("__aeabi_d")] == []


def test_firmware_sample_runs_on_the_board_and_prints_its_class(tmp_path):
    result = subprocess.run(["bash", str(ROOT / "samples" / "firmware" / "build.sh"), str(tmp_path)],
                            capture_output=True, text=True, env={**os.environ, "PYTHON": sys.executable})
    assert result.returncode == 0, result.stderr
    elf = tmp_path / "firmware.elf"
    s = sizes.artifact_sizes(elf)
    assert s["code_bytes"] > 0 and s["rodata_bytes"] > 30000  # digits_cnn's weights are in flash
    assert s["bss_bytes"] >= 4096  # the static arena
    # main.c's frames: a vertical stroke two pixels wide at column 10 + frame, rows 4 to 23
    model = onnx.load(str(ROOT / "samples" / "digits_cnn.onnx"))
    printed = re.findall(r"^frame (\d): digit (\d)$", result.stdout + result.stderr, re.M)
    assert [int(f) for f, _ in printed] == list(range(8)), result.stdout + result.stderr
    for frame, digit in printed:
        image = np.zeros((1, 1, 28, 28), np.float32)
        image[0, 0, 4:24, 10 + int(frame):12 + int(frame)] = 1.0
        expected, _ = reference_outputs(model, {model.graph.input[0].name: image}, [model.graph.output[0].name])
        assert int(digit) == int(np.argmax(expected[model.graph.output[0].name])), f"frame {frame}"


# --- size report on every artifact kind ------------------------------------------------------------
@pytest.mark.parametrize("target", ["host", "wasm32"])  # cortex-m4: above
def test_report_states_code_weights_and_arena(target, tmp_path):
    out_dir, report = build(ROOT / "samples" / "digits_cnn.onnx", BuildOptions(target=target, out_dir=tmp_path / "out"))
    size = report["size"]
    assert size["weights_bytes"] == report["weights_bytes"] > 0 and size["arena_bytes"] == report["arena_bytes"] > 0
    for kind, s in size["artifacts"].items():
        assert 0 < s["code_bytes"] < s["file_bytes"] == (out_dir / report["artifacts"][kind]).stat().st_size
        assert s["rodata_bytes"] + s["data_bytes"] >= report["weights_bytes"]  # weights are stored, not code


def test_build_prints_the_size_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mlcc", "build", str(ROOT / "samples" / "digits_cnn.onnx"), "-t", "cortex-m4",
                          "-o", str(tmp_path / "out")], capture_output=True, text=True, check=True).stdout
    assert "size: code " in out and "read-only weights" in out and "arena" in out
    assert re.search(r"memory: stack \d+ B .*libdigits_cnn.a flash \d+ B, RAM \d+ B", out), out
