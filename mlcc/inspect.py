"""`mlcc inspect`: what a model holds and how memory would be planned, without compiling."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from . import ops
from .pipeline import BuildOptions, compile_model
from .report import model_flops, op_counts, tensor_info


def describe(model: Path, target: str, shapes, dims, opt_level: int) -> dict:
    from .frontend import load_model

    proto = load_model(model)
    unsupported = sorted({f"{n.op_type} ({n.name})" for n in proto.graph.node if ops.lookup(n.op_type, n.domain) is None})
    if unsupported:
        return {"model": str(model), "unsupported": unsupported,
                "ops": dict(sorted(_count(n.op_type for n in proto.graph.node).items()))}
    compiled = compile_model(model, BuildOptions(target=target, shapes=shapes, dims=dims, opt_level=opt_level, compile=False))
    graph, plan = compiled.graph, compiled.plan
    offsets = {id(b.value): b.offset for b in plan.buffers}
    nodes = []
    for node in graph.nodes:
        op = ops.lookup(node.op_type, node.domain)
        nodes.append({
            "name": node.name, "op": node.op_type,
            "inputs": [v.type_str() for v in node.inputs if v is not None],
            "outputs": [v.type_str() for v in node.outputs if v.name],
            "arena_offsets": [offsets.get(id(v)) for v in node.outputs if v.name],
            "flops": op.flops(node) if op else 0,
        })
    return {
        "model": str(model), "target": compiled.target.name, "unsupported": [],
        "inputs": [tensor_info(v) for v in graph.inputs],
        "outputs": [tensor_info(v, n) for v, n in zip(graph.outputs, graph.output_names)],
        "parameters": int(sum(np.prod(v.shape, dtype=np.int64) for v in graph.constants())),
        "flops": model_flops(graph),
        "ops_before": compiled.ops_before, "ops": op_counts(graph), "nodes": nodes,
        "memory": {
            "intermediates_bytes": plan.intermediates_bytes, "arena_bytes": plan.arena_bytes,
            "arena_lower_bound_bytes": plan.lower_bound_bytes,
            "peak": {"step": plan.peak_step, "tensors": plan.peak_values},
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
    lines.append(f"{'#':>4}  {'node'.ljust(width)}  {'op':<20} {'output':<28} {'offset':>10} {'MFLOP':>9}")
    for i, n in enumerate(info["nodes"]):
        offset = ",".join("-" if o is None else str(o) for o in n["arena_offsets"])
        lines.append(f"{i:>4}  {n['name'].ljust(width)}  {n['op']:<20} {', '.join(n['outputs']):<28} {offset:>10} {n['flops'] / 1e6:>9.2f}")
    m = info["memory"]
    lines.append("")
    lines.append(f"memory: intermediates {m['intermediates_bytes']:,} B, arena {m['arena_bytes']:,} B, "
                 f"lower bound {m['arena_lower_bound_bytes']:,} B")
    lines.append(f"largest live set (step {m['peak']['step']}): {', '.join(m['peak']['tensors'])}")
    return "\n".join(lines)
