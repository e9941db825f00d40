"""The bundled sample: built for every target and compared with onnxruntime, and the C programs in
samples/c_api built against the static library, run, and checked."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx

from mlcc.pipeline import BuildOptions, build
from mlcc.verify import compare, reference_outputs
from tests.golden import check_model, split_target

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "digits_cnn.onnx"
C_API = ROOT / "samples" / "c_api"


def synthetic_image() -> np.ndarray:
    """The image samples/c_api/main.c feeds."""
    y, x = np.mgrid[0:28, 0:28]
    return (((x + 2 * y) % 7) / np.float32(6.0)).astype(np.float32).reshape(1, 1, 28, 28)


def test_sample_matches_onnxruntime(target, tmp_path):
    check_model(onnx.load(str(SAMPLE)), {"image": synthetic_image()}, target, tmp_path, rtol=1e-4, atol=1e-6)


def zig_cc(*args, cwd):
    proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", *map(str, args)], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_c_program_calls_the_model(tmp_path):
    out, _ = build(SAMPLE, BuildOptions(target="host", out_dir=tmp_path / "digits"))
    zig_cc("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{out}", C_API / "main.c", out / "libdigits_cnn.a",
           "-lm", "-o", tmp_path / "digits_app", cwd=tmp_path)
    lines = subprocess.run([tmp_path / "digits_app"], check=True, capture_output=True, text=True).stdout.splitlines()
    got = np.array([float(line.split()[1]) for line in lines[:10]], dtype=np.float32)
    expected, _ = reference_outputs(onnx.load(str(SAMPLE)), {"image": synthetic_image()}, ["probabilities"])
    result = compare(got, expected["probabilities"].reshape(-1), 1e-4, 1e-6)
    assert result.ok, f"max abs {result.max_abs}"
    assert lines[10] == f"class {int(np.argmax(expected['probabilities']))}"


def test_two_models_link_into_one_program(tmp_path):
    for name in ("first", "second"):
        build(SAMPLE, BuildOptions(target="host", out_dir=tmp_path / name, name=name))
    zig_cc("-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path / 'first'}", f"-I{tmp_path / 'second'}",
           C_API / "two_models.c", tmp_path / "first" / "libfirst.a", tmp_path / "second" / "libsecond.a",
           "-lm", "-o", tmp_path / "two", cwd=tmp_path)
    result = subprocess.run([tmp_path / "two"], check=True, capture_output=True, text=True)
    assert result.stdout.strip() == "same"


def test_output_is_byte_identical_across_builds(target, tmp_path):
    target_name, _ = split_target(target)
    first, report = build(SAMPLE, BuildOptions(target=target_name, out_dir=tmp_path / "a"))
    second, _ = build(SAMPLE, BuildOptions(target=target_name, out_dir=tmp_path / "b"))
    for name in ("digits_cnn.c", "digits_cnn.h", "digits_cnn.weights.bin", *report["artifacts"].values()):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_run_refuses_null_and_misaligned_arena(tmp_path):
    from cffi import FFI

    from mlcc.runners.host import aligned_empty

    out, report = build(SAMPLE, BuildOptions(target="host", out_dir=tmp_path / "d"))
    ffi = FFI()
    ffi.cdef("int digits_cnn_run(const float *image, float *probabilities, void *arena);")
    lib = ffi.dlopen(str(out / report["artifacts"]["shared_library"]))
    image, probs = synthetic_image(), np.zeros((1, 10), np.float32)
    arena = aligned_empty(report["arena_bytes"] + 64)
    ptr = lambda a, offset=0: ffi.cast("void *", a.ctypes.data + offset)  # noqa: E731
    assert lib.digits_cnn_run(ptr(image), ptr(probs), ffi.NULL) == 1
    assert lib.digits_cnn_run(ptr(image), ptr(probs), ptr(arena, 4)) == 2
    assert not probs.any(), "a refused call must not write the outputs"
    assert lib.digits_cnn_run(ptr(image), ptr(probs), ptr(arena)) == 0
    assert abs(float(probs.sum()) - 1.0) < 1e-5
