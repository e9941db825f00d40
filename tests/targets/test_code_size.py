"""A model links only the kernels and variants it calls: not every f32-gemm micro-kernel, direct convolution
panel width or Winograd transform of a family it uses (runtime objects compiled with -ffunction-sections,
shared libraries linked with --gc-sections, static libraries holding only the members the model reaches)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from mlcc.pipeline import BuildOptions, build
from tests.golden import node_model

ROOT = Path(__file__).resolve().parents[2]
needs_nm = pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm")


def _functions(library: Path) -> set[str]:
    """Every function symbol of a linked ELF library, local (hidden kernels) or global."""
    out = subprocess.run(["nm", str(library)], capture_output=True, text=True, check=True).stdout
    return {parts[2] for parts in map(str.split, out.splitlines()) if len(parts) == 3 and parts[1] in "tT"}


def _matmul_model(path: Path) -> Path:
    rng = np.random.default_rng(0)
    model = node_model("MatMul", {"a": rng.standard_normal((64, 96), dtype=np.float32)}, ["y"],
                       initializers={"b": rng.standard_normal((96, 80), dtype=np.float32)})
    onnx.save(model, path)
    return path


@needs_nm
def test_gemm_model_links_only_its_gemm_variant(tmp_path):
    out_dir, report = build(_matmul_model(tmp_path / "mm.onnx"), BuildOptions(target="host", out_dir=tmp_path / "out"))
    config, = set(re.findall(r"mlcc_f32_gemm_config_(\d+)x(\d+)__(\w+)", (out_dir / "mm.c").read_text()))
    mr, nr, isa = config
    functions = _functions(out_dir / report["artifacts"]["shared_library"])
    ukernels = {f for f in functions if f.startswith("mlcc_f32_gemm_ukernel_")}
    assert ukernels == {f"mlcc_f32_gemm_ukernel_{mr}x{nr}__{isa}", f"mlcc_f32_gemm_ukernel_1x{nr}__{isa}"}, ukernels
    assert "mlcc_f32_gemm" in functions and "mlcc_f32_gemm__reference" not in functions
    assert not {f for f in functions if "winograd" in f or "conv" in f}


@needs_nm
def test_direct_convolution_links_one_panel_width_and_no_winograd_it_does_not_run(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 1, 12, 12), dtype=np.float32)
    w = rng.standard_normal((8, 1, 3, 3), dtype=np.float32)  # 1 input channel: the direct kernel
    onnx.save(node_model("Conv", {"x": x}, ["y"], {"pads": [1, 1, 1, 1]}, initializers={"w": w}), tmp_path / "c.onnx")
    out_dir, report = build(tmp_path / "c.onnx", BuildOptions(target="host", out_dir=tmp_path / "out"))
    called = set(re.findall(r"mlcc_f32_conv_direct_nhwc\w*", (out_dir / "c.c").read_text()))
    functions = _functions(out_dir / report["artifacts"]["shared_library"])
    assert {f for f in functions if f.startswith("mlcc_f32_conv_direct_nhwc")} == called, functions
    assert not {f for f in functions if "winograd" in f or f.startswith("mlcc_f32_gemm_ukernel_")}


def test_static_library_holds_only_the_members_the_model_reaches(tmp_path):
    out_dir, report = build(_matmul_model(tmp_path / "mm.onnx"), BuildOptions(target="cortex-m4", out_dir=tmp_path / "out"))
    config, = set(re.findall(r"mlcc_f32_gemm_config_(\w+)", (out_dir / "mm.c").read_text()))
    members = subprocess.run([sys.executable, "-m", "ziglang", "ar", "t", str(out_dir / report["artifacts"]["static_library"])],
                             capture_output=True, text=True, check=True).stdout.split()
    gemm = [m for m in members if m.startswith("f32-gemm__ukernel")]
    assert len(gemm) == 1 and config.split("__")[0] in gemm[0], members
