"""Where a build gave up speed ("no silent slow path"): the steps that run generic code, with their share of
the model's FLOPs, for report.json's `slow_path` and `mlcc build`'s summary.

A step is generic when it does arithmetic (FLOPs > 0) and none of it runs on a vector kernel, that is when
it calls no kernel in a vector form (lower.KernelUse: one ISA's intrinsics, a SIMD shim, a SIMD GEMM tile)
and either
- it calls a kernel in a generic form: its family's `__reference` oracle (the family has nothing faster for
  the target), or a shim kernel or GEMM tile built `__scalar` (the target has no SIMD shim); or
- it is a C loop nest of its own (perhaps around portable helpers) and the target has no SIMD registers
  wider than 32 bits (`vector_bytes` of one float: wasm32-scalar, riscv64-scalar, and cortex-m4, whose DSP
  extension packs 8- and 16-bit lanes into its general registers), or its op names kernel families
  with vector forms for what it computes (Op.vector_families: f32-* families for a float32 result, qs8-*
  for 8-bit operands) and one of them has a vector form for the target: MatMulInteger's loop on AVX2,
  where qs8-gemm has mlcc_qs8_gemm__avx2.
A step calling a vector kernel is not generic even beside reference helpers (an LSTM's gate arithmetic
next to its vector GEMMs). Plain loops of ops with no vector family (elementwise, reductions, Resize) are
left to the compiler's auto-vectoriser and not listed on a target with vector registers.

The same list carries an int8 model's ops that passes/lower_quantized_islands left in float (dequantized
around themselves), whatever kernel runs them: integer speed was given up there. The pass says which and
why; the FLOP shares are computed here, from the steps as built.
"""

from __future__ import annotations

import numpy as np

from . import kernels, ops
from .targets import Target

EIGHT_BIT = (np.dtype(np.int8), np.dtype(np.uint8))


def vector_form(target: Target, family: str) -> str | None:
    """A function (or GEMM tile) of `family` that the target builds in a vector form, else None."""
    f = kernels.family(family)
    for k in f.kernels:
        if k.runs_on(target) and kernels.form(target, k) == "vector":
            return k.function(kernels.shim_isa(target))
    have = set(target.features)
    for v in f.data.get("variant", []):  # tiles: f32-gemm's name their ISA, qs8-gemm's are named for it
        isa = v.get("isa", v["name"])
        if isa not in ("scalar", "reference") and set(v["features"]) <= have and v.get("min_vector_bytes", 0) <= target.vector_bytes:
            return f"{family} {v['name']}"
    return None


def _applies(family: str, node) -> bool:
    """Whether a family computes on this node's data: f32-* on a float32 result, qs8-* on 8-bit inputs."""
    dtype = family.split("-")[0]
    if dtype == "qs8":
        return any(v is not None and v.dtype in EIGHT_BIT for v in node.inputs)
    return dtype == "f32" and any(v.dtype == np.float32 for v in node.outputs)


def why_generic(step, target: Target) -> str | None:
    """Why the step runs generic code on the target (see the module's docstring), else None."""
    forms = [k.form for k in step.kernels]
    if "vector" in forms:
        return None
    generic = [k for k in step.kernels if k.form in ("reference", "scalar")]
    if generic:
        k = generic[0]
        if k.form == "reference":
            return f"{k.function}: {k.family} has no faster form for {target.name}"
        return f"{k.function}: built lane by lane ({target.name} has no SIMD shim)"
    if target.vector_bytes <= 4:
        return f"a plain C loop nest ({target.name} has no SIMD registers wider than 32 bits)"
    op = ops.of(step.node)
    for family in op.vector_families if op is not None else ():
        if _applies(family, step.node):
            form = vector_form(target, family)
            if form is not None:
                return f"a plain C loop nest ({form} is a vector form of {family} on {target.name})"
    return None


def slow_path(steps, target: Target, step_flops: list[int], total_flops: int, left_in_float: list[dict]) -> dict:
    """report.json's `slow_path`: the generic steps and the int8 model's ops left in float, in step order, each
    with its FLOPs and share of the model's, and their total share."""
    in_float = {entry["node"]: entry["why"] for entry in left_in_float}
    listed = []
    for index, (step, flops) in enumerate(zip(steps, step_flops)):
        reasons = []
        generic = why_generic(step, target) if flops > 0 else None
        if generic:
            reasons.append(generic)
        if step.node.name in in_float:
            reasons.append(f"left in float in an int8 model: {in_float[step.node.name]}")
        if reasons:
            listed.append({"step": index, "node": step.node.name, "op": step.node.op_type, "flops": flops,
                           "flop_share": _share(flops, total_flops), "why": "; ".join(reasons)})
    return {"flop_share": _share(sum(e["flops"] for e in listed), total_flops), "steps": listed}


def _share(flops: int, total: int) -> float:
    return round(flops / total, 4) if total else 0.0


def summary(report: dict, most: int = 5) -> list[str]:
    """`mlcc build`'s lines about the slow path, the largest shares first."""
    slow = report.get("slow_path") or {}
    steps = slow.get("steps", [])
    if not steps:
        return ["  slow path: none"]
    lines = [f"  slow path: {len(steps)} step(s) giving up speed, {100 * slow['flop_share']:.1f}% of the FLOPs "
             f"(report.json's slow_path):"]
    for e in sorted(steps, key=lambda e: -e["flops"])[:most]:
        lines.append(f"    {100 * e['flop_share']:5.1f}%  {e['op']} {e['node']!r}: {e['why']}")
    if len(steps) > most:
        lines.append(f"    ... and {len(steps) - most} more")
    return lines
