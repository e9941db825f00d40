"""benchmarks/: the native SIMD levels the suite times, and its table with a column pair per level."""

from benchmarks import measure, table
from mlcc import kernels
from mlcc.targets import host_target, resolve


def test_one_level_per_simd_shim_the_host_runs_best_first():
    levels = measure.native_levels()
    isas = [kernels.shim_isa(resolve(level)) for level in levels]
    assert isas[0] == kernels.shim_isa(host_target())
    assert len(set(isas)) == len(isas) and "scalar" not in isas
    if "avx512" in isas:  # an AVX-512 machine times its plain AVX-512 and AVX2 levels
        assert levels == ["x86_64-avx512", "x86_64"]


def _cell(ms: float) -> dict:
    return {"median_ms": ms, "p90_ms": ms, "runs": 3, "check": "ok"}


def test_the_table_has_a_latency_and_ratio_per_level_and_their_geometric_means():
    results = {
        "environment": {"date": "d", "cpu": "cpu", "cores": 2, "load_average": (1.0, 1.0, 1.0), "mlcc": "0",
                        "commit": "c", "onnxruntime": "1", "wasmtime": "1", "node": "v1", "web_note": None},
        "peak_gflops": {"avx512": 100.0, "avx2": 50.0}, "budget_s": 1, "rounds": 1,
        "levels": {"x86_64-avx512": "avx512", "x86_64": "avx2"}, "rows": [
            {"model": "a", "flops": 2_000_000, "ort": _cell(1.0),
             "native": {"x86_64-avx512": {"mlcc": _cell(0.5)}, "x86_64": {"mlcc": _cell(2.0)}}},
            {"model": "b", "flops": 2_000_000, "ort": _cell(1.0),
             "native": {"x86_64-avx512": {"mlcc": _cell(0.5)}, "x86_64": {"mlcc": _cell(0.5)}}},
        ]}
    text = table.markdown(results)
    header = next(line for line in text.splitlines() if line.startswith("| model"))
    assert "x86_64-avx512 / ORT" in header and "x86_64 / ORT" in header
    row_a = next(line for line in text.splitlines() if line.startswith("| a |"))
    assert "**0.50**" in row_a and "| 2.00 |" in row_a  # mlcc slower on one level: not bold
    means = next(line for line in text.splitlines() if "geometric mean" in line)
    assert "**0.50** (2)" in means and "**1.00** (2)" in means
    assert all(line.count("|") == header.count("|") for line in (row_a, means))


def test_wasm_columns_give_the_wall_and_the_cpu_time_ratio_to_onnxruntime_web():
    results = {
        "environment": {"date": "d", "cpu": "cpu", "cores": 2, "load_average": (1.0, 1.0, 1.0), "mlcc": "0",
                        "commit": "c", "onnxruntime": "1", "wasmtime": "1", "node": "v1", "web_note": None},
        "peak_gflops": {"avx2": 50.0}, "budget_s": 1, "rounds": 1, "levels": {"x86_64": "avx2"}, "rows": [
            {"model": "a", "flops": 2_000_000, "ort": _cell(1.0), "native": {"x86_64": {"mlcc": _cell(1.0)}},
             "wasm": {**_cell(2.0), "cpu_median_ms": 1.0}, "web": {**_cell(4.0), "cpu_median_ms": 4.0}},
            {"model": "b", "flops": 2_000_000, "ort": _cell(1.0), "native": {"x86_64": {"mlcc": _cell(1.0)}},
             "wasm": _cell(3.0), "web": _cell(2.0)},  # no CPU times: that cell is "-"
        ]}
    lines = table.markdown(results).splitlines()
    header = next(line for line in lines if line.startswith("| model"))
    assert "| wasm/web | wasm/web CPU |" in header
    assert "| **0.50** | **0.25** |" in next(line for line in lines if line.startswith("| a |"))
    assert "| 1.50 | - |" in next(line for line in lines if line.startswith("| b |"))
    means = next(line for line in lines if "geometric mean" in line)
    assert "**0.87** (2) | **0.25** (1)" in means
