"""A build's folder in users' build systems: its CMakeLists.txt under the host compiler (run, compared with
onnxruntime) and under a Cortex-M4 toolchain file (samples/firmware's CMake build, run on the emulated
board), and its Zephyr module layout in a stand-in for Zephyr's build (no Zephyr SDK here)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc.pipeline import BuildOptions, build
from mlcc.verify import reference_outputs

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "samples" / "firmware"

needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("ninja") is None,
                                 reason="cmake and ninja-build are not installed (scripts/test.sh installs them)")


def small_model(path: Path) -> Path:
    """Conv -> Relu -> Flatten -> Gemm: weights in a blob, two kernel families."""
    rng = np.random.default_rng(3)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 2, 3, 3)).astype(np.float32), "conv_w"),
             numpy_helper.from_array(rng.standard_normal((4,)).astype(np.float32), "conv_b"),
             numpy_helper.from_array(rng.standard_normal((4 * 6 * 6, 5)).astype(np.float32), "fc_w"),
             numpy_helper.from_array(rng.standard_normal((5,)).astype(np.float32), "fc_b")]
    nodes = [helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], name="conv1"),
             helper.make_node("Relu", ["conv"], ["relu"], name="relu1"),
             helper.make_node("Flatten", ["relu"], ["flat"], name="flatten"),
             helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["scores"], name="fc")]
    graph = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 2, 8, 8])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


CONSUMER_MAIN = r"""
#include <stdio.h>
#include "small.h"

static unsigned char arena[SMALL_ARENA_BYTES] __attribute__((aligned(SMALL_ARENA_ALIGN)));
static float image[1 * 2 * 8 * 8], scores[5];

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    FILE *in = fopen(argv[1], "rb"), *out = fopen(argv[2], "wb");
    if (!in || !out || fread(image, sizeof image, 1, in) != 1) return 3;
    int status = small_run(image, scores, arena);
    if (fwrite(scores, sizeof scores, 1, out) != 1) return 4;
    fclose(in);
    fclose(out);
    return status;
}
"""

CONSUMER_CMAKE = """
cmake_minimum_required(VERSION 3.16)
project(consumer LANGUAGES C)
add_subdirectory("{model}" small)
add_executable(consumer main.c)
target_compile_options(consumer PRIVATE -Wall -Wextra -Werror)
target_link_libraries(consumer PRIVATE small)
"""


def _cmake(source: Path, binary: Path, *defines: str, env: dict | None = None) -> None:
    for cmd in (["cmake", "-G", "Ninja", "-S", str(source), "-B", str(binary), *defines],
                ["cmake", "--build", str(binary)]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@needs_cmake
def test_cmake_consumer_on_host_matches_onnxruntime(tmp_path):
    model = small_model(tmp_path / "small.onnx")
    out_dir, _ = build(model, BuildOptions(target="host", out_dir=tmp_path / "small", compile=False))
    consumer = tmp_path / "consumer"
    consumer.mkdir()
    (consumer / "main.c").write_text(CONSUMER_MAIN)
    (consumer / "CMakeLists.txt").write_text(CONSUMER_CMAKE.format(model=out_dir.as_posix()))
    _cmake(consumer, tmp_path / "cmake-build", "-DCMAKE_C_COMPILER=cc")  # the system compiler, not Zig's

    image = np.random.default_rng(0).standard_normal((1, 2, 8, 8)).astype(np.float32)
    image.tofile(tmp_path / "image.bin")
    subprocess.run([str(tmp_path / "cmake-build" / "consumer"), str(tmp_path / "image.bin"), str(tmp_path / "scores.bin")],
                   check=True, timeout=30)
    got = np.fromfile(tmp_path / "scores.bin", dtype=np.float32).reshape(1, 5)
    expected, _ = reference_outputs(str(model), {"image": image}, ["scores"])
    np.testing.assert_allclose(got, expected["scores"], rtol=1e-4, atol=1e-4)


def _digit_images() -> list[np.ndarray]:
    """samples/firmware/main.c's capture_image for frames 0..7: a two-pixel vertical stroke, shifted."""
    images = []
    for frame in range(8):
        image = np.zeros((1, 1, 28, 28), np.float32)
        column = 10 + frame % 8
        image[0, 0, 4:24, column:column + 2] = 1.0
        images.append(image)
    return images


@needs_cmake
@pytest.mark.skipif(shutil.which("qemu-system-arm") is None, reason="qemu-system-arm is not installed")
def test_firmware_sample_builds_with_cmake_for_cortex_m4(tmp_path):
    """samples/firmware's CMakeLists.txt with its Zig toolchain file links the cortex-m4 build's library
    target into firmware.elf; on mps2-an386 each frame's class is onnxruntime's."""
    onnx_path = ROOT / "samples" / "digits_cnn.onnx"
    out_dir, _ = build(onnx_path, BuildOptions(target="cortex-m4", name="digits", out_dir=tmp_path / "digits"))
    env = {**os.environ, "PYTHON": sys.executable}
    _cmake(FIRMWARE, tmp_path / "fw", f"-DMODEL_DIR={out_dir}", f"-DCMAKE_TOOLCHAIN_FILE={FIRMWARE / 'cmake' / 'cortex-m4.cmake'}", env=env)
    elf = tmp_path / "fw" / "firmware.elf"
    assert elf.read_bytes()[:4] == b"\x7fELF" and elf.read_bytes()[18] == 40  # e_machine EM_ARM
    proc = subprocess.run(["qemu-system-arm", "-machine", "mps2-an386", "-cpu", "cortex-m4", "-nographic", "-monitor", "none",
                           "-serial", "none", "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    input_name = onnx.load(str(onnx_path)).graph.input[0].name
    output_name = onnx.load(str(onnx_path)).graph.output[0].name
    expected = [f"frame {f}: digit {int(np.argmax(reference_outputs(str(onnx_path), {input_name: image}, [output_name])[0][output_name]))}"
                for f, image in enumerate(_digit_images())]
    assert proc.returncode == 0 and (proc.stdout + proc.stderr).splitlines() == expected  # semihosting writes to stderr


FAKE_ZEPHYR = """
cmake_minimum_required(VERSION 3.16)
project(app LANGUAGES C)
# Zephyr's module machinery, reduced to what a module's build uses: module.yml names the CMake folder,
# zephyr_library_* add to the current library, zephyr_include_directories reach the application.
set(CONFIG_MLCC_SMALL y)
set(ZEPHYR_CURRENT_LIBRARY "")
macro(zephyr_library_named name)
  set(ZEPHYR_CURRENT_LIBRARY ${{name}})
  add_library(${{name}} STATIC)
endmacro()
function(zephyr_library_sources)
  target_sources(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
function(zephyr_library_include_directories)
  target_include_directories(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
function(zephyr_library_compile_options)
  target_compile_options(${{ZEPHYR_CURRENT_LIBRARY}} PRIVATE ${{ARGN}})
endfunction()
function(zephyr_include_directories)
  set_property(GLOBAL APPEND PROPERTY ZEPHYR_INTERFACE_INCLUDES ${{ARGN}})
endfunction()
file(STRINGS "{module}/zephyr/module.yml" cmake_line REGEX "^  cmake: ")
string(REGEX REPLACE "^  cmake: " "" module_cmake "${{cmake_line}}")
add_subdirectory("{module}/${{module_cmake}}" module_build)
get_property(includes GLOBAL PROPERTY ZEPHYR_INTERFACE_INCLUDES)
add_executable(app main.c)
target_include_directories(app PRIVATE ${{includes}})
target_link_libraries(app PRIVATE small m)
"""


@needs_cmake
def test_zephyr_module_layout_builds_in_a_stand_in_zephyr(tmp_path):
    model = small_model(tmp_path / "small.onnx")
    out_dir, _ = build(model, BuildOptions(target="host", out_dir=tmp_path / "small", compile=False))
    module_yml = (out_dir / "zephyr" / "module.yml").read_text()
    assert "name: small" in module_yml and "cmake: zephyr" in module_yml and "kconfig: zephyr/Kconfig" in module_yml
    assert "config MLCC_SMALL" in (out_dir / "zephyr" / "Kconfig").read_text()
    app = tmp_path / "app"
    app.mkdir()
    (app / "main.c").write_text(CONSUMER_MAIN)
    (app / "CMakeLists.txt").write_text(FAKE_ZEPHYR.format(module=out_dir.as_posix()))
    _cmake(app, tmp_path / "app-build", "-DCMAKE_C_COMPILER=cc")
    image = np.ones((1, 2, 8, 8), np.float32)
    image.tofile(tmp_path / "image.bin")
    subprocess.run([str(tmp_path / "app-build" / "app"), str(tmp_path / "image.bin"), str(tmp_path / "scores.bin")],
                   check=True, timeout=30)
    expected, _ = reference_outputs(str(model), {"image": image}, ["scores"])
    np.testing.assert_allclose(np.fromfile(tmp_path / "scores.bin", np.float32).reshape(1, 5), expected["scores"],
                               rtol=1e-4, atol=1e-4)
