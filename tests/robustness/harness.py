"""Build generated C outside mlcc's own toolchain (system gcc, sanitizers, threads) and run it on files.

`CASES` are small models that each route one representative op through arena tensors (a Neg before and
after it), so the op's kernel reads and writes planned arena bytes; the digits sample adds a whole model.
`build_case` builds one with mlcc (C sources only), optionally with a spread-out "guard plan";
`compile_c` compiles NAME.c, the runtime sources report.json lists, and a driver with the system gcc.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlcc.plan
from mlcc import buildfiles, targets
from mlcc.pipeline import BuildOptions, build
from mlcc.verify import compare, reference_outputs
from tests.golden import rand

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parents[1] / "samples" / "digits_cnn.onnx"
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror"]
GAP = 256  # guard bytes around every tensor in a guard plan, and slack after any arena


@dataclass
class Case:
    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    rtol: float = 1e-4
    atol: float = 1e-5
    alternate: dict[str, np.ndarray] = field(default_factory=dict)  # a second input set (threads test)


def system_gcc() -> str:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("no system gcc on PATH: these tests compile generated C with it (scripts/test.sh installs it)")
    return gcc


def around(op_type: str, x: np.ndarray, attrs: dict | None = None, order: list[str] | None = None,
           inputs: dict | None = None, initializers: dict | None = None, n_outputs: int = 1, opset: int = 17) -> onnx.ModelProto:
    """x -> Neg -> op -> Neg per output. `order` names the op's inputs, "x" being the negated x (default:
    x, then `inputs`, then `initializers`); `inputs` are further graph inputs, `initializers` constants."""
    inputs, initializers = inputs or {}, initializers or {}
    order = order or ["x", *inputs, *initializers]
    outs = [f"y{i}" for i in range(n_outputs)]
    nodes = [helper.make_node("Neg", ["x_in"], ["x"], name="pre"),
             helper.make_node(op_type, order, [f"{o}_raw" for o in outs], name=op_type.lower(), **(attrs or {})),
             *(helper.make_node("Neg", [f"{o}_raw"], [o], name=f"post{i}") for i, o in enumerate(outs))]
    feeds = {"x_in": x, **inputs}
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in feeds.items()]
    graph_outputs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers.items()]
    graph = helper.make_graph(nodes, op_type.lower(), graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def _index(shape, low, high, seed):
    return np.random.default_rng(seed).integers(low, high, shape).astype(np.int64)


def _cases() -> dict[str, Case]:
    f32 = np.float32
    x4 = rand(1, 3, 9, 9)
    lstm_w, lstm_r, lstm_b = rand(2, 24, 5, seed=1) * f32(0.5), rand(2, 24, 6, seed=2) * f32(0.5), rand(2, 48, seed=3) * f32(0.1)
    scatter_idx = np.array([[0], [3], [1]], np.int64)
    cases = {
        "conv": Case(around("Conv", x4, dict(pads=[1, 1, 1, 1], strides=[2, 2]),
                            initializers={"w": rand(4, 3, 3, 3, seed=1), "b": rand(4, seed=2)}), {"x_in": x4}),
        "conv_depthwise_dilated": Case(around("Conv", rand(1, 4, 8, 8), dict(group=4, dilations=[2, 2], pads=[2, 2, 2, 2]),
                                              initializers={"w": rand(4, 1, 3, 3, seed=1)}), {"x_in": rand(1, 4, 8, 8)}),
        "gemm": Case(around("Gemm", rand(5, 7), dict(transB=1, alpha=0.5, beta=2.0),
                            initializers={"b": rand(13, 7, seed=1), "c": rand(13, seed=2)}), {"x_in": rand(5, 7)}),
        "max_pool": Case(around("MaxPool", rand(1, 2, 11, 11), dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)),
                         {"x_in": rand(1, 2, 11, 11)}),
        "average_pool": Case(around("AveragePool", rand(1, 2, 10, 9), dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1])),
                             {"x_in": rand(1, 2, 10, 9)}),
        "resize_linear": Case(around("Resize", rand(1, 2, 5, 6), dict(mode="linear"), order=["x", "", "scales"],
                                     initializers={"scales": np.array([1, 1, 2, 1.5], f32)}), {"x_in": rand(1, 2, 5, 6)}),
        "resize_cubic_sizes": Case(around("Resize", rand(1, 1, 6, 7), dict(mode="cubic"), order=["x", "", "", "sizes"],
                                          initializers={"sizes": np.array([1, 1, 4, 11], np.int64)}), {"x_in": rand(1, 1, 6, 7)}),
        "gather": Case(around("Gather", rand(4, 6, 3), dict(axis=1), inputs={"idx": _index((2, 5), -6, 6, 1)}),
                       {"x_in": rand(4, 6, 3), "idx": _index((2, 5), -6, 6, 1)}, alternate={"idx": _index((2, 5), -6, 6, 2)}),
        "scatter_elements": Case(around("ScatterElements", rand(4, 6), dict(axis=0, reduction="add"),
                                        inputs={"idx": _index((2, 6), -4, 4, 3), "upd": rand(2, 6, seed=4)}),
                                 {"x_in": rand(4, 6), "idx": _index((2, 6), -4, 4, 3), "upd": rand(2, 6, seed=4)},
                                 alternate={"idx": _index((2, 6), -4, 4, 5)}),
        "scatter_nd": Case(around("ScatterND", rand(4, 5, 6), inputs={"idx": scatter_idx, "upd": rand(3, 5, 6, seed=5)}),
                           {"x_in": rand(4, 5, 6), "idx": scatter_idx, "upd": rand(3, 5, 6, seed=5)},
                           alternate={"idx": scatter_idx[::-1].copy()}),
        "reduce_mean": Case(around("ReduceMean", rand(3, 5, 7), dict(axes=[1], keepdims=0)), {"x_in": rand(3, 5, 7)}),
        "reduce_max": Case(around("ReduceMax", rand(3, 5, 7), dict(axes=[0, 2])), {"x_in": rand(3, 5, 7)}),
        "softmax": Case(around("Softmax", rand(3, 5, 17), dict(axis=-1)), {"x_in": rand(3, 5, 17)}),
        "log_softmax_axis1": Case(around("LogSoftmax", rand(3, 5, 17), dict(axis=1)), {"x_in": rand(3, 5, 17)}),
        "lstm_bidirectional": Case(around("LSTM", rand(4, 2, 5), dict(hidden_size=6, direction="bidirectional"),
                                          initializers={"w": lstm_w, "r": lstm_r, "b": lstm_b}, n_outputs=3),
                                   {"x_in": rand(4, 2, 5)}, rtol=1e-4, atol=1e-5),
        "digits_cnn": Case(onnx.load(str(SAMPLE)), {"image": rand(1, 1, 28, 28, low=0.0, high=1.0)}, atol=1e-6),
    }
    for case in cases.values():  # by default the second input set is the first one perturbed
        x_name = next(iter(case.feeds))
        case.alternate = {**case.feeds, x_name: (case.feeds[x_name] * np.float32(-0.75) + np.float32(0.25)).astype(np.float32),
                          **case.alternate}
    return cases


CASES = _cases()


def spread_plan(plan: mlcc.plan.MemoryPlan) -> mlcc.plan.MemoryPlan:
    """The guard plan: every tensor gets bytes of its own, GAP bytes after the previous one, no sharing."""
    cursor = 0
    for b in plan.buffers:
        b.offset = cursor + GAP if b.size else cursor
        cursor = b.offset + b.size
    plan.arena_bytes = cursor + GAP if plan.buffers else 0
    plan.verify()
    return plan


def guard_ranges(plan: mlcc.plan.MemoryPlan) -> tuple[int, list[tuple[int, int]]]:
    """(bytes to allocate, guarded ranges): every arena byte outside all tensors' exact bytes (gaps,
    tensors' alignment padding) and GAP bytes of slack after the arena."""
    total = plan.arena_bytes + GAP
    covered = sorted((b.offset, b.offset + b.value.nbytes) for b in plan.buffers if b.value.nbytes)
    ranges, cursor = [], 0
    for start, end in covered:
        if start > cursor:
            ranges.append((cursor, start - cursor))
        cursor = max(cursor, end)
    ranges.append((cursor, total - cursor))
    return total, ranges


def build_case(case: Case, out_dir: Path, guard_plan: bool = False) -> tuple[Path, dict, mlcc.plan.MemoryPlan]:
    """mlcc's C sources for the case (no zig compile) and the memory plan they were generated with."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "model.onnx"
    onnx.save(case.model, str(path))
    planned = []
    real = mlcc.plan.plan_memory

    def planner(program, *args, **kwargs):
        plan = real(program, *args, **kwargs)
        planned.append(spread_plan(plan) if guard_plan else plan)
        return planned[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mlcc.plan, "plan_memory", planner)
        out, report = build(path, BuildOptions(target="host", out_dir=out_dir / "out", name="model", compile=False))
    return out, report, planned[0]


def compile_c(out: Path, report: dict, driver: str, exe: Path, flags: list[str]) -> None:
    """gcc NAME.c + the runtime sources + tests/robustness/<driver>, run from the output folder (for .incbin):
    the sources, include folders and ISA flags the folder's CMake build takes (mlcc.buildfiles.c_build)."""
    name = report["name"]
    c = buildfiles.c_build(targets.resolve(report["target"]), report["files"])
    cmd = [system_gcc(), *STRICT, *c.isa_flags, *flags, *(f"-I{d}" for d in c.include_dirs), "-I.",
           f'-DDRIVER_MODEL_HEADER="{name}.h"', f"-DDRIVER_MODEL_RUN_V={name}_run_v",
           f"-DDRIVER_MODEL_RUN_PARALLEL={name}_run_parallel", f"-DDRIVER_MODEL_ARENA_BYTES={name.upper()}_ARENA_BYTES",
           *c.sources, *c.pool_sources, str(HERE / driver), "-o", str(exe), "-lm"]
    proc = subprocess.run(cmd, cwd=out, capture_output=True, text=True)
    assert proc.returncode == 0, f"gcc failed:\n{proc.stderr[-6000:]}"


SANITIZER_ENV = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0:halt_on_error=1",
                 "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1", "TSAN_OPTIONS": "halt_on_error=1"}


def run(cmd: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **SANITIZER_ENV})


def write_inputs(report: dict, feeds: dict, folder: Path, prefix: str) -> list[Path]:
    paths = []
    for i, spec in enumerate(report["inputs"]):
        p = folder / f"{prefix}in{i}.bin"
        p.write_bytes(np.ascontiguousarray(feeds[spec["name"]], dtype=spec["dtype"]).tobytes())
        paths.append(p)
    return paths


def output_specs(report: dict, folder: Path, prefix: str) -> list[tuple[Path, np.dtype, tuple, int]]:
    specs = []
    for i, spec in enumerate(report["outputs"]):
        dtype, shape = np.dtype(spec["dtype"]), tuple(spec["shape"])
        specs.append((folder / f"{prefix}out{i}.bin", dtype, shape, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize))
    return specs


def read_outputs(report: dict, specs) -> dict[str, np.ndarray]:
    return {spec["name"]: np.fromfile(p, dtype=d).reshape(s) for spec, (p, d, s, _) in zip(report["outputs"], specs)}


def run_driver(exe: Path, report: dict, plan: mlcc.plan.MemoryPlan, case: Case, folder: Path,
               guards: list[tuple[int, int]] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """Run driver.c's executable on the case's inputs with the plan's guard ranges (or `guards`)."""
    total, ranges = guard_ranges(plan)
    guard_file = folder / "guards.txt"
    guard_file.write_text("".join(f"{o} {n}\n" for o, n in (guards if guards is not None else ranges)))
    ins, outs = write_inputs(report, case.feeds, folder, ""), output_specs(report, folder, "")
    proc = run([exe, total, guard_file, len(ins), *ins, len(outs), *(x for p, _, _, n in outs for x in (p, n))], folder)
    return proc, (read_outputs(report, outs) if proc.returncode == 0 else {})


def assert_matches_onnxruntime(case: Case, feeds: dict, got: dict, label: str) -> None:
    expected, _ = reference_outputs(case.model, feeds, list(got))
    for name, value in got.items():
        result = compare(value, expected[name], case.rtol, case.atol)
        assert result.ok, f"{label}: {name}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}"


SANITIZE = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]


def sanitized_outputs(model: onnx.ModelProto, feeds: dict, folder: Path) -> tuple[dict, dict]:
    """Outputs of `model` built with a guard plan and run under ASan+UBSan with the arena guard; fails the
    test on any sanitizer report or guard hit. Used by tests/golden.py when MLCC_GOLDEN_SANITIZE=1."""
    case = Case(model, feeds)
    out, report, plan = build_case(case, folder, guard_plan=True)
    exe = folder / "driver_asan"
    compile_c(out, report, "driver.c", exe, SANITIZE)
    proc, got = run_driver(exe, report, plan, case, folder)
    assert "Sanitizer" not in proc.stderr and "runtime error" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0, proc.stderr[-4000:]
    return got, report
