"""The compiler's data flow, top to bottom: load -> import -> passes -> lower -> plan -> codegen -> toolchain.

Each stage is one call; `verify_each` asks each stage to check its own contract.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import (
    __version__,
    buildfiles,
    cnames,
    codegen,
    extents,
    frontend,
    ir,
    jsmodule,
    lower,
    passes,
    plan,
    runner_source,
    targets,
    toolchain,
    tuning,
)
from .errors import MemoryLimitError, NeedsConstantError, ShapeError, UsageError
from .report import build_report, op_counts


@dataclass
class BuildOptions:
    target: str = "host"
    out_dir: Path | None = None
    name: str | None = None
    shapes: dict[str, tuple] = field(default_factory=dict)  # a dim is N, or (MIN, MAX): varies at run time
    dims: dict[str, int | tuple[int, int]] = field(default_factory=dict)  # SYMBOL -> N, or (MIN, MAX)
    frozen: dict[str, object] = field(default_factory=dict)  # input name -> values: the input becomes a constant
    opt_level: int = 2
    disabled_passes: tuple[str, ...] = ()
    verify_each: bool = False
    compile: bool = True  # False stops after planning (inspect)
    optimize_for: str | None = None  # "size" or "speed" (targets.optimized_for); None: the target's policies
    arena_limit: int | None = None  # refuse a plan whose arena is larger (bytes)
    outputs_overlap_inputs: bool = False  # the caller may pass overlapping buffers: intermediates stay out of outputs
    weights_policy: str | None = None  # overrides the target's ("model": e.g. Winograd's weights prepared at load)
    tuning: Path | None = None  # a tuning file (`mlcc tune`, mlcc/tuning.py): per-layer choices over the heuristics
    progress: Callable[[str], None] = lambda stage: None
    after_pass: Callable[[str, ir.Graph], None] = lambda name, graph: None  # e.g. --print-after


@dataclass
class Compiled:
    """Everything known about a model after planning, before any file is written."""
    graph: ir.Graph
    program: lower.Program
    plan: plan.MemoryPlan
    pass_log: list[dict]
    ops_before: dict[str, int]
    target: targets.Target
    name: str
    greedy: plan.GreedyPlan | None = None  # TFLite Micro's plan of the graph as imported, for comparison
    model_weights_bytes: int = 0  # the constants of the graph as imported: the model's own weights
    variables: list[extents.Variable] = field(default_factory=list)  # dims that vary at run time
    arena_bytes_at_min: int | None = None  # the plan of the same graph at every variable's minimum
    extents_found: dict = field(default_factory=dict)


def default_name(model_path: Path) -> str:
    return cnames.identifier(model_path.stem) or "model"


def compile_model(model_path: Path, options: BuildOptions) -> Compiled:
    target = targets.optimized_for(targets.resolve(options.target), options.optimize_for)
    if options.weights_policy is not None:
        target = targets.with_weights_policy(target, options.weights_policy)
    if options.tuning is not None:
        target = dataclasses.replace(target, tuning=tuning.load(options.tuning, target.name))
    name = options.name or default_name(model_path)
    if not cnames.is_identifier(name):
        raise UsageError(f"--name {name!r} is not a C identifier (letters, digits and _, not starting with a digit)")
    pass_names = passes.pipeline(options.opt_level, options.disabled_passes)

    options.progress("loading")
    model = frontend.load_model(model_path)
    variables = extents.variables(model, options.shapes, options.dims)
    points = extents.samples(variables) if variables else [{}]
    built = []
    for index, point in enumerate(points):
        shapes, dims = extents.concrete(model, options.shapes, options.dims, point)
        quiet = index > 0  # the samples below the maximum are built silently
        built.append(_optimised(model, options, shapes, dims, name, target, pass_names, quiet))
    graph, ops_before, greedy, model_weights, pass_log = built[0]
    found, arena_at_min = {}, None
    if variables:
        found = extents.annotate([b[0] for b in built], variables, points)
        minimum = {v.name: v.low for v in variables}
        at_min = (built[points.index(minimum)][0] if minimum in points else
                   _optimised(model, options, *extents.concrete(model, options.shapes, options.dims, minimum),
                              name, target, pass_names, True)[0])
        arena_at_min = plan.plan_memory(lower.lower_graph(at_min, target), not options.outputs_overlap_inputs).arena_bytes

    options.progress("lowering")
    try:
        program = lower.lower_graph(graph, target)
    except NeedsConstantError as exc:  # an operand only the lowering needs as a constant
        frontend.explain_needs_constant(exc, graph)
        raise
    options.progress("planning memory")
    memory = plan.plan_memory(program, output_room=not options.outputs_overlap_inputs)
    if variables:
        extents.check_plan(program, memory)
    if memory.arena_bytes > frontend.MAX_ARENA_BYTES:
        raise ShapeError(f"the memory plan needs an arena of {memory.arena_bytes} bytes, over the "
                         f"{frontend.MAX_ARENA_BYTES} limit (largest at step {memory.peak_step}: "
                         f"{', '.join(map(repr, memory.peak_values[:3]))})", f"model {name!r}")
    if options.arena_limit is not None and memory.arena_bytes > options.arena_limit:
        raise MemoryLimitError(_over_limit(program, memory, options.arena_limit, greedy), f"model {name!r}")
    return Compiled(graph, program, memory, pass_log, ops_before, target, name, greedy, model_weights,
                    variables, arena_at_min, found)


def _optimised(model, options: BuildOptions, shapes: dict, dims: dict, name: str, target, pass_names, quiet: bool):
    """The graph imported at these shapes and through the passes: (graph, ops before, greedy plan, the
    model's weight bytes, the pass log)."""
    progress = (lambda stage: None) if quiet else options.progress
    progress("importing")
    graph = frontend.import_model(model, frontend.ShapeOverrides(shapes, dims, options.frozen), name)
    ops_before = op_counts(graph)
    greedy = plan.greedy_by_size(graph, plan.ALIGN)
    model_weights = sum(v.nbytes for v in graph.constants())
    if options.verify_each:
        graph.verify()

    pass_log = []
    for pass_name in pass_names:
        progress(f"pass {pass_name}")
        started = time.perf_counter()
        did = passes.get(pass_name)(graph, target)
        pass_log.append({"pass": pass_name, "seconds": round(time.perf_counter() - started, 4), **did})
        if not quiet:
            options.after_pass(pass_name, graph)
        if options.verify_each:
            graph.verify()
    return graph, ops_before, greedy, model_weights, pass_log


def _over_limit(program: lower.Program, memory: plan.MemoryPlan, limit: int, greedy: plan.GreedyPlan) -> str:
    node = program.steps[memory.peak_step].node
    live = ", ".join(f"{name!r} ({size:,} B)" for name, size in zip(memory.peak_values, memory.peak_bytes))
    return (f"the memory plan needs an arena of {memory.arena_bytes:,} bytes, over --arena-limit {limit:,}; "
            f"its peak is step {memory.peak_step} (node {node.name!r}, {node.op_type}) with {live} live "
            f"(lower bound {memory.lower_bound_bytes:,} B; the unfused graph's greedy plan {greedy.arena_bytes:,} B)")


def build(model_path: str | Path, options: BuildOptions) -> tuple[Path, dict]:
    """Compile the model into options.out_dir; returns (out_dir, report). Nothing is left on failure."""
    model_path = Path(model_path)
    started = time.perf_counter()
    compiled = compile_model(model_path, options)
    out_dir = Path(options.out_dir or Path("mlcc-out") / f"{model_path.stem}-{compiled.target.name}")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        options.progress("generating C")
        sources = codegen.generate(compiled.program, compiled.plan, staging, compiled.name,
                                   model_path.read_bytes(), model_path.name, compiled.variables)
        sources.files += buildfiles.write(staging, compiled.name, compiled.target, sources.files)
        if compiled.target.is_wasm:  # an npm package: package.json, and types for NAME.mjs
            sources.files += jsmodule.write_package(staging, compiled.name, compiled.graph, compiled.variables,
                                                    threads=bool(compiled.target.thread_pool))
        artifacts = {}
        if options.compile:
            options.progress(f"compiling for {compiled.target.name}")
            exports = [f"{compiled.name}_run_v", f"{compiled.name}_run"]
            exports += [f"{compiled.name}_run_dims"] if compiled.variables else []
            threaded_wasm = compiled.target.is_wasm and compiled.target.thread_pool
            if threaded_wasm:
                exports += [f"{compiled.name}_run_parallel"]
                exports += [f"{compiled.name}_run_dims_parallel"] if compiled.variables else []
            heap = jsmodule.heap_bytes(compiled.graph, compiled.plan.arena_bytes, compiled.variables) if threaded_wasm else 0
            artifacts = toolchain.build_artifacts(compiled.target, staging, compiled.name,
                                                  compiled.program.kernel_families, exports,
                                                  io=runner_source.tensors(compiled.graph, len(compiled.variables)),
                                                  wasm_heap_bytes=heap)
            if threaded_wasm:  # NAME.mjs creates the shared memory: its pages are the linked module's
                jsmodule.write_module(staging, compiled.name, model_path.name, compiled.graph,
                                      compiled.plan.arena_bytes, compiled.variables,
                                      toolchain.wasm_memory_pages(staging / artifacts["wasm"]))
        report = build_report(compiled, sources, artifacts, staging, time.perf_counter() - started)
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        staging.chmod(0o755)  # mkdtemp makes it private; the result is an ordinary folder
        if out_dir.exists():
            shutil.rmtree(out_dir)
        staging.rename(out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out_dir, report




__all__ = ["BuildOptions", "Compiled", "build", "compile_model", "__version__"]
