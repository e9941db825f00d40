"""Sanitizer and arena-guard runs of generated C.

Each model is built with a guard plan (every arena tensor at its own offset with GAP bytes of gap before
it, no sharing), compiled by the system gcc with -fsanitize=address,undefined, and run on inputs and
outputs allocated at their exact sizes. Every arena byte outside all tensors' exact bytes (the gaps, each
tensor's alignment padding, GAP bytes of slack after the arena) is canary-filled and ASan-poisoned.

What a pass proves, for these inputs: no step reads or writes outside the planned bytes of some tensor by
less than GAP bytes (ASan stops at the faulting access; canaries double-check writes), no kernel reads past
an input or writes past an output buffer, and no undefined behaviour UBSan checks (signed overflow, shifts,
misaligned or null pointers, out-of-bounds on fixed-size arrays) happens. It does not prove that a step
only touches the tensors it should among those it may reach (an overrun longer than GAP that lands inside
another tensor) or anything for shapes and values not run; the real plan's own sharing is checked by
MemoryPlan.verify and by the outputs still matching onnxruntime under it (test_system_gcc).
"""

import pytest

from tests.quantized.models import feeds, input_shape, quantized
from tests.quantized.reference import distances, real_number_reference
from tests.robustness.harness import (
    CASES,
    SANITIZE,
    assert_matches_onnxruntime,
    build_case,
    compile_c,
    run_driver,
    sanitized_outputs,
)

# The float whole model (digits_cnn) runs ops that each have a case of their own here: its place goes to an int8
# model, whose kernels (qs8-packed's indirect and plain GEMM, qs8-dwconv, requantization) no float case reaches.
SANITIZED = sorted(set(CASES) - {"digits_cnn"})


@pytest.mark.parametrize("case_name", SANITIZED)
def test_sanitizers_and_arena_guard(case_name, tmp_path):
    case = CASES[case_name]
    got, _ = sanitized_outputs(case.model, case.feeds, tmp_path)
    assert_matches_onnxruntime(case, case.feeds, got, f"{case_name} under sanitizers")


def test_int8_model_under_sanitizers_and_arena_guard(tmp_path):
    """tests/quantized's QDQ convnet, built as for the host (its ISA's int8 kernels), bit-identical to the
    graph's real-number semantics."""
    model = quantized("convnet", "qdq_u8_channel", 13)
    inputs = feeds(input_shape("convnet"), seed=100)
    got, report = sanitized_outputs(model, inputs, tmp_path)
    assert any(k.startswith("qs8-") for k in report["kernel_families"]), report["kernel_families"]
    for row in distances(model, got, real_number_reference(model, inputs)):
        assert row.steps < 0.5, f"{row.output}: {row.steps:.2f} steps from the real-number semantics"


@pytest.mark.parametrize("sanitize", [False, True], ids=["canary", "asan"])
def test_arena_guard_catches_a_write_into_guarded_bytes(sanitize, tmp_path):
    """The guard itself works: guarding bytes a step legitimately writes (the first arena tensor's) fails."""
    case = CASES["conv"]
    out, report, plan = build_case(case, tmp_path, guard_plan=True)
    first = min((b for b in plan.buffers if b.size), key=lambda b: b.offset)
    exe = tmp_path / "driver"
    compile_c(out, report, "driver.c", exe, SANITIZE if sanitize else ["-O2"])
    proc, _ = run_driver(exe, report, plan, case, tmp_path, guards=[(first.offset + 8, 16)])
    assert proc.returncode != 0
    expected = "AddressSanitizer" if sanitize else f"arena byte {first.offset + 8} (guard"
    assert expected in proc.stderr, proc.stderr[-4000:]
