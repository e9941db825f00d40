"""report.json: what was built, for people and for `mlcc run/bench`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import __version__, cexpr, ops
from .sizes import artifact_sizes
from .slow_path import slow_path
from .stack_depth import library_stack_depth


def tensor_info(value, name: str | None = None) -> dict:
    """name, dtype, shape (the largest); where dims vary at run time also `dims` (each a number, or the
    expression of the run-time dimensions it is, e.g. "seq" or "64*seq") and `shape_min`."""
    info = {"name": name or value.name, "dtype": np.dtype(value.dtype).name, "shape": [int(d) for d in value.shape]}
    if value.extents is not None:
        info["dims"] = [d.text() if cexpr.is_variable(d) else int(d) for d in value.extents]
        info["shape_min"] = [cexpr.bound(d, "min") for d in value.extents]
    return info


def model_flops(graph) -> int:
    total = 0
    for node in graph.nodes:
        op = ops.lookup(node.op_type, node.domain)
        total += op.flops(node) if op is not None else 0
    return int(total)


def step_info(node) -> dict:
    op = ops.lookup(node.op_type, node.domain)
    info = {"node": node.name, "op": node.op_type, "flops": int(op.flops(node)) if op is not None else 0}
    return {**info, **op.describe(node)} if op is not None else info


def build_report(compiled, sources, artifacts: dict[str, str], out_dir: Path, seconds: float) -> dict:
    graph, memory = compiled.graph, compiled.plan
    sizes = {kind: artifact_sizes(out_dir / rel) for kind, rel in artifacts.items()}
    stack = None
    if "static_library" in artifacts:
        stack = library_stack_depth((out_dir / artifacts["static_library"]).read_bytes(),
                                    [f"{compiled.name}_run", f"{compiled.name}_run_v"])
    for kind, s in sizes.items():
        s.update(memory_totals(kind, s, memory.arena_bytes, stack.bytes if stack else None))
    # parallel: the step's kernels cut it into tasks for NAME_run_parallel
    steps = [{**step_info(s.node), "parallel": s.parallel} for s in compiled.program.steps]
    flops = model_flops(graph)
    report = {
        "mlcc_version": __version__,
        "name": compiled.name,
        "target": compiled.target.name,
        "inputs": [tensor_info(v) for v in graph.inputs],
        "outputs": [tensor_info(v, n) for v, n in zip(graph.outputs, graph.output_names)],
        "arena_bytes": memory.arena_bytes,
        **variable_dims(compiled),
        "arena_lower_bound_bytes": memory.lower_bound_bytes,
        "intermediates_bytes": memory.intermediates_bytes,
        "arena_peak": {"step": memory.peak_step, "tensors": memory.peak_values, "tensor_bytes": memory.peak_bytes},
        # TFLite Micro's greedy-by-size plan of the graph as imported (no fusion, no sharing): the planner's gain
        "arena_greedy_unfused_bytes": compiled.greedy.arena_bytes,
        "optimized_for": optimized_for(compiled),
        "memory_sharing": memory.sharing(),
        "weights_bytes": sources.weights_bytes,
        "weights_tensors": sources.weights_count,
        "code_bytes": {kind: s["code_bytes"] for kind, s in sizes.items()},  # machine code only, per artifact
        "size": {"weights_bytes": sources.weights_bytes, "arena_bytes": memory.arena_bytes,
                 "stack_bytes": stack.bytes if stack else None, "artifacts": sizes},
        "stack": stack.as_dict() if stack else None,
        "artifacts": artifacts,
        "files": sources.files,
        "flops": flops,
        "ops_before": compiled.ops_before,
        "ops": op_counts(graph),
        "kernel_families": compiled.program.kernel_families,
        "steps": steps,  # NAME.c's numbered steps, for profiles
        # the steps on generic code and an int8 model's ops left in float, with their FLOP shares
        "slow_path": build_slow_path(compiled, steps, flops),
        "passes": compiled.pass_log,
        "build_seconds": round(seconds, 3),
    }
    tuning = compiled.target.tuning
    if tuning is not None:  # `mlcc build --tuning FILE`: what the file held for this target and CPU
        report["tuning"] = {"file": tuning.source, "cpu": tuning.cpu, "entries": len(tuning.choices),
                            "ignored": tuning.ignored}
    return report


def build_slow_path(compiled, steps: list[dict], flops: int) -> dict:
    in_float = next((p.get("left_in_float", []) for p in compiled.pass_log if p["pass"] == "lower_quantized_islands"), [])
    return slow_path(compiled.program.steps, compiled.target, [s["flops"] for s in steps], flops, in_float)


def variable_dims(compiled) -> dict:
    """For a build with dimensions that vary at run time: each with its range and its member of NAME_dims
    (the order NAME_run_dims reads them), and the arena the same graph needs at every minimum (the artifact's
    arena_bytes is planned at the maxima)."""
    if not compiled.variables:
        return {}
    from .cnames import identifier
    return {"dims": [{"name": v.name, "min": v.low, "max": v.high, "c_member": identifier(v.name)} for v in compiled.variables],
            "arena_bytes_at_min": compiled.arena_bytes_at_min, "extents": compiled.extents_found}


def optimized_for(compiled) -> dict:
    """The memory and weights policies the build used (targets.optimized_for), and what they gave."""
    target = compiled.target
    winograd = next((p for p in compiled.pass_log if p["pass"] == "choose_winograd"), {})
    return {
        "memory": target.memory_policy,  # "size": workspaces of a few KiB; "speed": up to 2 MiB a node
        "weights": target.weights_policy,  # "model": no transform enlarges the weights; "speed": they may
        "model_weights_bytes": compiled.model_weights_bytes,
        "winograd_convolutions": winograd.get("convolutions", 0),
        # weights computed at load time into the arena's first bytes (Winograd's transforms under "model")
        "prepared_at_load_bytes": compiled.plan.prepared_bytes,
        "ram_bytes": target.ram_bytes or None,  # the part's, when the target is a bare-metal one
        "flash_bytes": target.flash_bytes or None,
    }


def memory_totals(kind: str, size: dict, arena_bytes: int, stack_bytes: int | None) -> dict:
    """flash = code + read-only data + .data's initial values; RAM = arena + stack + data + bss. A firmware
    image holds its arena (and I/O buffers) in .bss; a library's caller provides the arena. The stack is
    the run function's deepest (stack_depth.py), where known."""
    flash = size["code_bytes"] + size["rodata_bytes"] + size["data_bytes"]
    arena = 0 if kind == "firmware" else arena_bytes
    ram = arena + (stack_bytes or 0) + size["data_bytes"] + size["bss_bytes"]
    return {"flash_bytes": flash, "ram_bytes": ram}


def op_counts(graph) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in graph.nodes:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    return dict(sorted(counts.items()))
