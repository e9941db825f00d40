"""The ONNX backend node cases mlcc is measured on, generated from the installed onnx package at run time.

Applicable: every tensor in the case (graph inputs, outputs, value infos and attribute tensors, subgraphs
included) is float32, float16, double, int8, uint8, int32, int64 or bool, and no node is random or a training
op (the training domain, or Dropout given a training_mode input: a random mask). `run_case` builds a case
through `mlcc.onnx_backend` (the same lowering real models use), runs each of
its data sets and compares with onnx's own `Runner.assert_similar_outputs` at the case's tolerances.
"""

from __future__ import annotations

import collections
import functools
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto

EXPECTED_PASS_FILE = Path(__file__).with_name("expected_pass.txt")

APPLICABLE_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT8,
                    TensorProto.UINT8, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL}
RANDOM_OPS = {"Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"}
TRAINING_DOMAIN = "ai.onnx.preview.training"


@dataclass(frozen=True)
class Outcome:
    passed: bool
    reason: str = ""  # one line: why it failed


def _graph_applicable(graph: onnx.GraphProto) -> bool:
    for info in [*graph.input, *graph.output, *graph.value_info]:
        kind = info.type.WhichOneof("value")
        if kind != "tensor_type" or info.type.tensor_type.elem_type not in APPLICABLE_TYPES:
            return False
    for init in graph.initializer:
        if init.data_type not in APPLICABLE_TYPES:
            return False
    for node in graph.node:
        if node.op_type in RANDOM_OPS or node.domain == TRAINING_DOMAIN:
            return False
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
            return False
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type not in APPLICABLE_TYPES:
                return False
            subgraphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            if not all(_graph_applicable(g) for g in subgraphs):
                return False
    return True


@functools.lru_cache(maxsize=1)
def all_cases() -> dict[str, object]:
    """Every node case onnx generates, by name (the generators warn about deliberate overflows: hush)."""
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return {case.name: case for case in collect_testcases(None)}


def applicable_cases() -> dict[str, object]:
    return {name: case for name, case in all_cases().items() if _graph_applicable(case.model.graph)}


def op_of(case) -> str:
    """The op a case exercises: its first node's (an `_expanded` case is the function body of that op)."""
    node = case.model.graph.node[0]
    return node.op_type if not node.domain or node.domain == "ai.onnx" else f"{node.domain}.{node.op_type}"


def tested_op(name: str, case) -> str:
    """Op under test, named by the case; `_expanded` bodies count for the op they expand."""
    graph_ops = {n.op_type for n in case.model.graph.node}
    if "_expanded" in name and len(graph_ops) > 1:
        stem = re.sub(r"^test_", "", name.split("_expanded")[0])
        for op in all_ops_lower():
            if stem == op or stem.startswith(op + "_"):
                return all_ops_lower()[op]
    return op_of(case)


@functools.lru_cache(maxsize=1)
def all_ops_lower() -> dict[str, str]:
    """snake-ish lowercase op name -> op name, longest first so `reducesum` wins over `reduce`."""
    names = {schema.name for schema in onnx.defs.get_all_schemas_with_history()}
    table = {n.lower(): n for n in names}
    return dict(sorted(table.items(), key=lambda kv: -len(kv[0])))


def dtypes_of(case) -> set[str]:
    graph = case.model.graph
    return {TensorProto.DataType.Name(i.type.tensor_type.elem_type).lower() for i in [*graph.input, *graph.output]}


def run_case(case, target: str = "host") -> Outcome:
    from onnx.backend.test.runner import Runner

    from mlcc import errors, onnx_backend

    try:
        rep = onnx_backend.prepare(case.model, "CPU", target=target)
        for inputs, expected in case.data_sets:
            got = rep.run([_to_array(x) for x in inputs])
            Runner.assert_similar_outputs([_to_array(x) for x in expected], list(got), case.rtol, case.atol)
    except errors.MlccError as exc:
        return Outcome(False, f"{type(exc).__name__}: {_first_line(str(exc))}")
    except AssertionError as exc:
        return Outcome(False, f"mismatch: {_first_line(_mismatch(str(exc)))}")
    except Exception as exc:  # a crash in mlcc is a failure of the case, reported, never hidden
        return Outcome(False, f"crash {type(exc).__name__}: {_first_line(str(exc))}")
    return Outcome(True)


def _to_array(x) -> np.ndarray:
    return onnx.numpy_helper.to_array(x) if isinstance(x, onnx.TensorProto) else np.asarray(x)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if lines else "")[:300]


def _mismatch(text: str) -> str:
    wanted = [line.strip() for line in text.splitlines()
              if line.strip().startswith(("Mismatched", "Max absolute", "Output", "Items are not equal", "x and y"))]
    return "; ".join(wanted) if wanted else text


def read_expected() -> set[str]:
    """The cases expected to pass, on every target (one name per line; `#` starts a comment)."""
    if not EXPECTED_PASS_FILE.exists():
        return set()
    return {line.split("#", 1)[0].strip() for line in EXPECTED_PASS_FILE.read_text().splitlines()} - {""}


def write_expected(names: set[str]) -> None:
    header = ("# ONNX backend node cases mlcc passes, on host and wasm32 alike; CI fails when one of them fails.\n"
              "# Regenerate with `python -m tests.conformance --write-expected` and review the diff.\n")
    EXPECTED_PASS_FILE.write_text(header + "".join(f"{name}\n" for name in sorted(names)))


def summarize(results: dict[str, Outcome], cases: dict[str, object]) -> str:
    """Pass rate overall, per dtype and per op, and the failing ops with their first reason."""
    lines = []
    total, passed = len(results), sum(o.passed for o in results.values())
    lines.append(f"passed {passed} of {total} applicable cases: {100 * passed / max(total, 1):.1f}%")
    by_dtype: dict[str, list[bool]] = collections.defaultdict(list)
    by_op: dict[str, list[tuple[str, Outcome]]] = collections.defaultdict(list)
    for name, outcome in results.items():
        for dtype in dtypes_of(cases[name]):
            by_dtype[dtype].append(outcome.passed)
        by_op[tested_op(name, cases[name])].append((name, outcome))
    lines.append("per dtype (a case counts under each dtype among its inputs and outputs):")
    for dtype, flags in sorted(by_dtype.items()):
        lines.append(f"  {dtype:8} {sum(flags):5} / {len(flags):<5} {100 * sum(flags) / len(flags):5.1f}%")
    failing = {op: items for op, items in by_op.items() if not all(o.passed for _, o in items)}
    lines.append(f"ops: {len(by_op)}, all cases passing: {len(by_op) - len(failing)}; ops with failing cases:")
    for op, items in sorted(failing.items()):
        bad = [(n, o) for n, o in items if not o.passed]
        lines.append(f"  {op}: {len(items) - len(bad)} / {len(items)} pass; e.g. {bad[0][0]}: {bad[0][1].reason}")
    return "\n".join(lines)
