"""`mlcc inspect`: what a model holds and how memory would be planned, without compiling."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import ops
from .errors import UsageError
from .pipeline import BuildOptions, compile_model
from .report import model_flops, op_counts, tensor_info


def describe(model: Path, target: str, shapes, dims, opt_level: int, plot: Path | None = None,
             optimize_for: str | None = None, outputs_overlap_inputs: bool = False) -> dict:
    """What `mlcc inspect` shows; with `plot`, also write the memory timeline there as SVG."""
    from .frontend import load_model
    from .plan.plot import svg

    proto = load_model(model)
    unsupported = sorted({f"{n.op_type} ({n.name})" for n in proto.graph.node if ops.lookup(n.op_type, n.domain) is None})
    if unsupported:
        return {"model": str(model), "unsupported": unsupported,
                "ops": dict(sorted(_count(n.op_type for n in proto.graph.node).items()))}
    compiled = compile_model(model, BuildOptions(target=target, shapes=shapes, dims=dims, opt_level=opt_level,
                                                 compile=False, optimize_for=optimize_for,
                                                 outputs_overlap_inputs=outputs_overlap_inputs))
    graph, plan = compiled.graph, compiled.plan
    alias = plan.alias_of()
    nodes = []
    for index, step in enumerate(compiled.program.steps):  # in the planned schedule
        node = step.node
        op = ops.lookup(node.op_type, node.domain)
        nodes.append({
            "name": node.name, "op": node.op_type,
            "inputs": [v.type_str() for v in node.inputs if v is not None],
            "outputs": [v.type_str() for v in node.outputs if v.name],
            "arena_offsets": [plan.offset_of(v) for v in node.outputs if v.name],
            "shares": [alias[id(v)].link.kind if id(v) in alias else None for v in node.outputs if v.name],
            "code": index not in plan.elided_steps,
            "flops": op.flops(node) if op else 0,
        })
    if plot is not None:
        try:
            Path(plot).write_text(svg(compiled.program, plan, compiled.name))
        except OSError as exc:
            raise UsageError(f"--plot: cannot write {str(plot)!r} ({exc.strerror or exc})") from None
    peak_node = compiled.program.steps[plan.peak_step].node if compiled.program.steps else None
    return {
        "model": str(model), "target": compiled.target.name, "unsupported": [],
        "inputs": [tensor_info(v) for v in graph.inputs],
        "outputs": [tensor_info(v, n) for v, n in zip(graph.outputs, graph.output_names)],
        # the model's own weights (passes fold and fuse constants into other shapes)
        "parameters": int(sum(np.prod(i.dims, dtype=np.int64) for i in proto.graph.initializer)),
        "flops": model_flops(graph),
        "ops_before": compiled.ops_before, "ops": op_counts(graph), "nodes": nodes,
        "memory": {
            "intermediates_bytes": plan.intermediates_bytes, "arena_bytes": plan.arena_bytes,
            "arena_lower_bound_bytes": plan.lower_bound_bytes,
            "arena_greedy_unfused_bytes": compiled.greedy.arena_bytes,
            "optimized_for": compiled.target.memory_policy,
            "peak": {"step": plan.peak_step, "node": peak_node.name if peak_node else None,
                     "tensors": [{"name": n, "bytes": b} for n, b in zip(plan.peak_values, plan.peak_bytes)]},
            "sharing": plan.sharing(),
        },
    }


def _count(items) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts


def format_text(info: dict) -> str:
    lines = [f"model {info['model']}"]
    if info["unsupported"]:
        lines.append(f"unsupported ops ({len(info['unsupported'])}): {', '.join(info['unsupported'])}")
        lines.append("ops: " + ", ".join(f"{k} x{v}" for k, v in info["ops"].items()))
        return "\n".join(lines)
    for t in info["inputs"]:
        lines.append(f"input  {t['name']}: {t['dtype']}{t['shape']}")
    for t in info["outputs"]:
        lines.append(f"output {t['name']}: {t['dtype']}{t['shape']}")
    lines.append(f"parameters {info['parameters']:,}   FLOPs {info['flops']:,}")
    lines.append(f"ops after optimisation: {', '.join(f'{k} x{v}' for k, v in info['ops'].items())}")
    lines.append("")
    width = max([len(n["name"]) for n in info["nodes"]] + [4])
    lines.append(f"{'#':>4}  {'node'.ljust(width)}  {'op':<20} {'output':<28} {'offset':>10} {'shares':<9} {'MFLOP':>9}")
    for i, n in enumerate(info["nodes"]):
        offset = ",".join("-" if o is None else str(o) for o in n["arena_offsets"])
        shares = ",".join(k or "-" for k in n["shares"]) + ("" if n["code"] else " (no code)")
        lines.append(f"{i:>4}  {n['name'].ljust(width)}  {n['op']:<20} {', '.join(n['outputs']):<28} {offset:>10} "
                     f"{shares:<9} {n['flops'] / 1e6:>9.2f}")
    m = info["memory"]
    ratio = m["arena_bytes"] / m["arena_lower_bound_bytes"] if m["arena_lower_bound_bytes"] else 1.0
    lines.append("")
    lines.append(f"memory: intermediates {m['intermediates_bytes']:,} B (the sum of all), arena {m['arena_bytes']:,} B, "
                 f"lower bound {m['arena_lower_bound_bytes']:,} B (arena / bound {ratio:.3f})")
    lines.append(f"unfused greedy plan (TFLite Micro's, the graph as imported): {m['arena_greedy_unfused_bytes']:,} B; "
                 f"the arena is {m['arena_bytes'] / max(m['arena_greedy_unfused_bytes'], 1):.3f} of it "
                 f"(optimized for {m['optimized_for']})")
    sharing = m["sharing"]
    lines.append(f"sharing: {sharing['views']} views, {sharing['in_place']} in place, "
                 f"{sharing['written_into_concat'] + sharing['placed_in_concat'] + sharing.get('written_into_concat_channels', 0)} "
                 "written into a Concat, "
                 f"{sharing['steps_without_code']} steps without code; {sharing['strategy']}")
    peak = m["peak"]
    lines.append(f"largest live set (step {peak['step']}, {peak['node']}): "
                 + ", ".join(f"{t['name']} {t['bytes']:,} B" for t in peak["tensors"]))
    return "\n".join(lines)
