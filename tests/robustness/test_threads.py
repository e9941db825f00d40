"""Reentrancy: NAME_run_v keeps no state, so two threads running it concurrently, each with its own arena,
inputs and outputs, get byte-for-byte what one thread gets. The plain build runs many iterations at full
speed; the ThreadSanitizer build runs fewer and fails on any data race (e.g. a static scratch buffer)."""

import pytest

from tests.robustness.harness import (
    CASES,
    assert_matches_onnxruntime,
    build_case,
    compile_c,
    output_specs,
    read_outputs,
    run,
    write_inputs,
)

BUILDS = {"O2": (["-O2", "-pthread"], 300), "tsan": (["-O1", "-g", "-fsanitize=thread", "-pthread"], 10)}


@pytest.mark.parametrize("build", sorted(BUILDS))
@pytest.mark.parametrize("case_name", ["conv", "gather", "lstm_bidirectional", "resize_cubic_sizes", "scatter_elements", "digits_cnn"])
def test_concurrent_runs_match_single_thread(case_name, build, tmp_path):
    case = CASES[case_name]
    flags, iterations = BUILDS[build]
    out, report, _ = build_case(case, tmp_path)
    exe = tmp_path / "threads"
    compile_c(out, report, "threads.c", exe, flags)
    ins = [*write_inputs(report, case.feeds, tmp_path, "a_"), *write_inputs(report, case.alternate, tmp_path, "b_")]
    outs_a, outs_b = output_specs(report, tmp_path, "a_"), output_specs(report, tmp_path, "b_")
    proc = run([exe, iterations, len(report["inputs"]), *ins, len(outs_a), *(p for p, *_ in outs_a + outs_b),
                *(n for *_, n in outs_a)], tmp_path)
    assert "ThreadSanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0, proc.stderr[-4000:]
    # the single-threaded references are themselves right
    assert_matches_onnxruntime(case, case.feeds, read_outputs(report, outs_a), f"{case_name} input set A")
    assert_matches_onnxruntime(case, case.alternate, read_outputs(report, outs_b), f"{case_name} input set B")
