"""Generated C is portable C99: the system gcc (12 on Debian, no #embed) compiles NAME.c and the runtime
sources it lists with -Wall -Wextra -Werror, and the program computes what onnxruntime computes.

The driver also checks, with canaries, that no arena byte outside the planned tensors' exact bytes (the
alignment padding the real plan leaves, and slack after the arena) is written."""

import pytest

from tests.robustness.harness import CASES, assert_matches_onnxruntime, build_case, compile_c, run_driver


@pytest.mark.parametrize("case_name", sorted(CASES))
def test_system_gcc_build_matches_onnxruntime(case_name, tmp_path):
    case = CASES[case_name]
    out, report, plan = build_case(case, tmp_path)
    exe = tmp_path / "driver"
    compile_c(out, report, "driver.c", exe, ["-O2"])
    proc, got = run_driver(exe, report, plan, case, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert_matches_onnxruntime(case, case.feeds, got, f"{case_name} built by gcc")
