"""Memory planning: every intermediate tensor gets an offset in one static arena.

Algorithm (as TFLite Micro's greedy planner): each tensor lives from the step that writes it to the last
step that reads it (scratch buffers: their one step). Tensors are placed largest first, each at the lowest
64-byte-aligned offset where it overlaps no already-placed tensor whose lifetime overlaps its own. The
lower bound is the peak, over steps, of the bytes simultaneously live: no plan can use less.

Graph inputs and outputs live in the caller's buffers and constants in the weights blob, so none of them
takes arena space.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import MlccError
from .ir import Value
from .lower import Program

ALIGN = 64


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    value: Value
    first: int  # step index that writes it
    last: int  # last step index that reads it
    size: int  # aligned bytes
    offset: int = -1


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int
    intermediates_bytes: int  # sum of all intermediate tensors: the arena without sharing
    peak_step: int
    peak_values: list[str]


    def verify(self) -> None:
        """No two tensors that are live at the same time share a byte."""
        for i, a in enumerate(self.buffers):
            for b in self.buffers[i + 1:]:
                lifetimes_overlap = a.first <= b.last and b.first <= a.last
                bytes_overlap = a.offset < b.offset + b.size and b.offset < a.offset + a.size
                if lifetimes_overlap and bytes_overlap and a.size and b.size:
                    raise MlccError(f"memory plan overlaps {a.value.name!r} and {b.value.name!r}")


def plan_memory(program: Program) -> MemoryPlan:
    external = {id(v) for v in program.graph.inputs} | {id(v) for v in program.graph.outputs}
    buffers: dict[int, Buffer] = {}
    for index, step in enumerate(program.steps):
        for v in step.reads:
            if id(v) in buffers:
                buffers[id(v)].last = index
            elif v.size == 0 and id(v) not in external and not v.is_const:  # from a skipped empty node
                buffers[id(v)] = Buffer(v, index, index, 0)
        for v in [*step.writes, *step.scratch]:
            if id(v) not in external and not v.is_const and id(v) not in buffers:
                buffers[id(v)] = Buffer(v, index, index, _aligned(v.nbytes))
    ordered = sorted(buffers.values(), key=lambda b: (-b.size, b.first, b.value.name))
    placed: list[Buffer] = []
    for buf in ordered:
        conflicts = sorted(
            (p for p in placed if p.first <= buf.last and buf.first <= p.last and p.size),
            key=lambda p: p.offset,
        )
        offset = 0
        for p in conflicts:
            if offset + buf.size <= p.offset:
                break
            offset = max(offset, p.offset + p.size)
        buf.offset = offset
        placed.append(buf)
    arena = max((b.offset + b.size for b in placed), default=0)

    peak, peak_step, peak_values = 0, 0, []
    for index in range(len(program.steps)):
        live = [b for b in placed if b.first <= index <= b.last]
        total = sum(b.size for b in live)
        if total > peak:
            peak, peak_step, peak_values = total, index, [b.value.name for b in live]
    plan = MemoryPlan(
        buffers=sorted(placed, key=lambda b: (b.first, b.value.name)),
        arena_bytes=arena,
        lower_bound_bytes=peak,
        intermediates_bytes=sum(b.size for b in placed),
        peak_step=peak_step,
        peak_values=peak_values,
    )
    plan.verify()
    return plan
