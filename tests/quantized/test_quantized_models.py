"""Models quantized by onnxruntime.quantization (QDQ and QOperator static, dynamic) against the exact integer
semantics: onnxruntime with graph optimisation off, which runs the graph as written (its fused int8 kernels
are not the reference: some saturate). Each output must be within one quantization step of it (the scale of
the DequantizeLinear that makes the output; float outputs of dynamic models within a float tolerance); the
share of bit-exact elements is asserted too, so a drift that stays under one step still shows."""

import re

import onnx
import pytest

from tests.golden import build_and_run
from tests.quantized.models import FLOAT_MODELS, FORMS, feeds, input_shape, quantized
from tests.quantized.reference import distances, real_number_reference, reference


def compare(model, got: dict, expected: dict) -> list[tuple[str, float, float]]:
    """(output, largest difference in steps, share of bit-exact elements) per output; asserts the bound."""
    rows = []
    for row in distances(model, got, expected):
        if row.steps is None:  # a float output (dynamic quantization): the integer product then float math
            assert row.within(), f"{row.output}: max abs err {row.max_abs:.3g} over {row.float_bound:.3g}"
            rows.append((row.output, row.max_abs, row.exact))
        else:
            assert row.within(1.0), f"{row.output}: {row.steps:.2f} quantization steps from the reference"
            rows.append((row.output, row.steps, row.exact))
    return rows


CASES = [(name, form, opset) for name in FLOAT_MODELS for form in FORMS for opset in (13, 17, 21)
         if opset == 17 or form in ("qdq_u8_channel", "qop_u8_channel")]
# each model and format by default (7 cases, the suite's time is budgeted); the rest of the matrix is slow
QUICK = {("convnet", "qdq_u8_channel", 13), ("convnet", "qop_u8_channel", 21), ("features", "qdq_s8_channel", 17),
         ("features", "qop_u8_channel", 17), ("mlp", "qop_s8_tensor", 17),
         ("attention", "qdq_s8_channel", 17), ("mobile", "qdq_u8_channel", 17)}
# (the dynamic forms run by default in tests/quantized/test_dynamic_products.py, bit for bit)


@pytest.mark.parametrize("name,form,opset", [case if case in QUICK else pytest.param(*case, marks=pytest.mark.slow)
                                             for case in CASES], ids=[f"{n}-{f}-op{o}" for n, f, o in CASES])
def test_quantized_model(name, form, opset, target, tmp_path):
    model = quantized(name, form, opset)
    inputs = feeds(input_shape(name), seed=100)  # not calibration data
    got, report = build_and_run(model, inputs, target, tmp_path)
    rows = compare(model, got, reference(model, inputs))
    if form.startswith("qdq"):  # bit-identical to the graph's real-number semantics (no float32 rounding)
        for row in distances(model, got, real_number_reference(model, inputs)):
            assert row.steps < 0.5, f"{row.output}: {row.steps:.2f} steps from the real-number semantics"
    if form.startswith("qdq"):  # every island integer (mobile's BatchNormalization too)
        islands = next(p for p in report["passes"] if p["pass"] == "lower_quantized_islands")
        assert islands["left_in_float"] == [], islands["left_in_float"]
        if name == "features":  # its shuffle goes into the per-channel Requantize (the BatchNormalization) before it
            folds = next(p for p in report["passes"] if p["pass"] == "fold_channel_permutations")
            assert folds["into_producers"] == 1 and folds["copied"] == 0, folds
    # against onnxruntime, a rounding tie decided the other way moves an element one step, and a step early in a
    # deep net can move more of the few outputs of a classifier; the feature map of convolutions alone is nearly
    # all exact (mobile's last AveragePool meets exact ties of sum / 4, which onnxruntime's float32 sums put on
    # either side of .5; its dynamic forms end in float Sigmoid / Mul / AveragePool arithmetic, and run its
    # BatchNormalization in float as one scale and shift where onnxruntime computes (x - mean) / sqrt(var + eps)
    # * gamma + beta: a last-bit difference on most elements, max 1.2e-7 against the 1e-4 bound checked above)
    least = {"features": 0.99, "mobile": 0.25 if form.startswith("dynamic") else 0.9}.get(name, 0.5)
    for output, _steps, exact in rows:
        assert exact >= least, f"{output}: only {exact:.1%} of elements bit-exact"


# Targets whose qs8-gemm row kernel neither host nor wasm32 runs: a model through their kernels (checked in the
# generated C) under qemu-user, in wasmtime or on the emulated board, against onnxruntime. By default the
# convolution model where convolutions take the row kernel (no channel-major one), else the MLP; the other
# model -m slow.
ISA_TARGETS = ["aarch64", "aarch64-dotprod", "armv7", "riscv64", "wasm32-relaxed", "cortex-m4", "cortex-m55"]
ISA_MODELS = {"features": ("qdq_s8_channel", 17), "mlp": ("qdq_u8_channel", 17)}


def _isa_cases():
    from mlcc.ops._qs8 import nchw_gemm_for
    from mlcc.targets import resolve

    for target_name in ISA_TARGETS:
        quick = "mlp" if nchw_gemm_for(resolve(target_name)) else "features"
        for name in ISA_MODELS:
            marks = () if name == quick else (pytest.mark.slow,)
            yield pytest.param(target_name, name, marks=marks, id=f"{target_name}-{name}")


@pytest.mark.parametrize("target_name,name", list(_isa_cases()))
def test_quantized_model_on_each_isa(target_name, name, tmp_path):
    from mlcc import kernels as kernel_table
    from mlcc.ops._qs8 import gemm_for, nchw_gemm_for
    from mlcc.targets import resolve

    form, opset = ISA_MODELS[name]
    model = quantized(name, form, opset)
    inputs = feeds(input_shape(name), seed=100)
    got, _ = build_and_run(model, inputs, target_name, tmp_path)
    # the quick case calls the row kernel (or the packed one, where the target has it on its ISA); the slow one
    # may take the channel-major kernel instead
    target = resolve(target_name)
    packed = kernel_table.kernel(target, "mlcc_qs8_packed_gemm")
    kernels = [k for k in (gemm_for(target), nchw_gemm_for(target),
                           packed.where == "isa" and kernel_table.function(target, "mlcc_qs8_packed_gemm")) if k]
    code = (tmp_path / f"out-{target_name}" / "model.c").read_text()
    assert any(re.search(rf"\b{k}\b", code) for k in kernels), f"none of {kernels} called"
    rows = compare(model, got, reference(model, inputs))
    # (mobile's last AveragePool meets ties of sum / 4, which the float reference decides either way; its
    # dynamic forms end in float BatchNormalization / Sigmoid / Mul / AveragePool arithmetic, equal to the bit
    # less often)
    least = {"features": 0.99, "mobile": 0.25 if form.startswith("dynamic") else 0.9}.get(name, 0.5)
    for output, _steps, exact in rows:
        assert exact >= least, f"{output}: only {exact:.1%} of elements bit-exact"


def test_verify_judges_a_quantized_model_in_quantization_steps(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "convnet.onnx"
    onnx.save(quantized("convnet", "qdq_s8_channel", 17), str(path))
    proc = subprocess.run([sys.executable, "-m", "mlcc", "verify", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "graph optimisation off" in proc.stdout and "within one quantization step" in proc.stdout, proc.stdout
