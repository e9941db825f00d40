"""Graph passes. Each lives in its own module `<verb>_<object>.py` exposing `run(graph) -> dict`, or
`run(graph, target) -> dict` when its choices depend on the target (mlcc.targets.Target), the dict being
what it did (recorded in report.json). PIPELINES lists them per -O level (0, 1, 2; there is no -O3: it
was the -O2 list under another name and was removed), in order; that list is the only
place a pass is named. Passes ask ops what they can do (mlcc.ops.Op's capabilities and roles), never
their names (tests/unit/test_passes_ask_ops.py checks).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Callable

from ..errors import UsageError
from ..ir import Graph
from ..targets import Target

PIPELINES: dict[int, list[str]] = {
    0: ["fold_constants", "eliminate_dead_code", "widen_float16"],
    1: ["lower_quantized_islands", "fold_constants", "fuse_integer_matmul", "remove_identities", "simplify_algebra",
        "eliminate_common_subexpressions", "fold_batch_norm", "fuse_matmul_add", "eliminate_dead_code", "widen_float16"],
    2: ["lower_quantized_islands", "fold_constants", "fuse_integer_matmul", "remove_identities", "simplify_algebra",
        "eliminate_common_subexpressions", "fold_batch_norm", "fuse_matmul_add", "recognise_softmax", "recognise_layer_norm", "recognise_gelu",
        "recognise_attention", "distribute_activations", "fuse_epilogues", "choose_layout", "choose_winograd",
        "fold_channel_permutations", "fold_layout_transposes", "fuse_elementwise", "eliminate_dead_code", "widen_float16"],
}


def all_pass_names() -> list[str]:
    return sorted({name for names in PIPELINES.values() for name in names})


def get(name: str) -> Callable[[Graph, Target], dict]:
    """The pass `name` as a function of (graph, target), whether or not it reads the target."""
    run = importlib.import_module(f"{__name__}.{name}").run
    if "target" in inspect.signature(run).parameters:
        return run
    return lambda graph, target: run(graph)


def pipeline(level: int, disabled: list[str] = ()) -> list[str]:
    unknown = [d for d in disabled if d not in all_pass_names()]
    if unknown:
        raise UsageError(f"--disable-pass: unknown pass {unknown[0]!r}; passes are: {', '.join(all_pass_names())}")
    if level not in PIPELINES:
        raise UsageError(f"unknown optimisation level -O{level}; levels are {', '.join(map(str, PIPELINES))}")
    return [p for p in PIPELINES[level] if p not in disabled]
