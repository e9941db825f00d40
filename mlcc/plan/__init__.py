"""Memory planning: every intermediate tensor gets an offset in one static arena.

The algorithm, in five steps:
  1. schedule (schedule.py): a few topological orders of the steps are tried (the model's own order first,
     then orders that finish what they start and run a step when it frees memory); each is judged by the
     steps below and the one with the smallest arena kept (ties: the smaller lower bound, then the earlier).
  2. sharing (sharing.py): Concat inputs written straight into their range of its output (or, along the
     channels of a channels-last tensor, into their strided channel slice of it), views (Reshape,
     Squeeze, contiguous Slice/Split, ...) pointing into their input, elementwise ops written over an input
     that dies with them. What shares bytes forms a tree; its root is one buffer, live from the first step
     writing any tensor of the tree to the last step reading any.
  3. output room (output_room.py): a root buffer whose life ends before a graph output is first written (or
     that the step writing it reads element by element into a wider type, at its end) moves into the caller's
     output buffer, out of the arena.
  4. lower bound: the peak, over steps, of the bytes of root buffers (and scratch) live at that step. No
     offset assignment of this schedule and sharing can use less.
  5. offsets (assign.py): several greedy placements (by size, lifetime, size x lifetime, start; first fit
     and best fit), the smallest arena kept. Sizes and offsets are multiples of 64 bytes.

Weights prepared at load time (lower.Preparation: e.g. Winograd's transformed kernels where the blob keeps
the model's own) take the arena's leading region: a 64-byte marker, then each at an aligned offset, never
reused; the intermediates' offsets start after it.

Graph inputs and outputs live in the caller's buffers and constants in the weights blob, so none of them
takes arena space; a view of a graph input points into the caller's buffer, and a Concat that is a graph
output has its producers write into the caller's buffer; intermediates that die before an output is written
live in its buffer (step 3), so the caller's inputs and outputs must not overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import MlccError
from ..ir import Value
from ..lower import Program, Step
from . import assign as _assign, output_room as _output_room, schedule as _schedule
from .greedy import GreedyPlan, greedy_by_size
from .sharing import Link, Sharing

ALIGN = 64
PREPARED_MARKER_BYTES = ALIGN  # the arena's first bytes: set once the prepared weights are written


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class Buffer:
    value: Value  # the root tensor (or scratch) whose bytes these are
    first: int  # step index that writes it (or the first of its tree)
    last: int  # last step index that reads it (or any tensor of its tree)
    size: int  # aligned bytes
    offset: int = -1


@dataclass
class Alias:
    """A tensor without bytes of its own: `offset` bytes into `root` (an arena buffer's value, a graph input
    or a graph output), by way of `link` (the tensor it shares with, and how)."""
    value: Value
    root: Value
    offset: int
    link: Link


@dataclass
class MemoryPlan:
    buffers: list[Buffer]
    arena_bytes: int
    lower_bound_bytes: int
    intermediates_bytes: int  # sum of all intermediate tensors (and the prepared region): the arena without sharing
    peak_step: int
    peak_values: list[str]  # the largest live set: root buffers live at peak_step
    aliases: list[Alias] = field(default_factory=list)
    elided_steps: set[int] = field(default_factory=set)  # steps whose outputs are all views: no code
    steps: list[Step] = field(default_factory=list)  # the schedule planned for
    external: set[int] = field(default_factory=set)  # id() of graph inputs and outputs
    strategy: str = ""  # the schedule and placement that won
    peak_bytes: list[int] = field(default_factory=list)  # sizes of peak_values, in order
    prepared: list[tuple[Value, int]] = field(default_factory=list)  # weights prepared at load, arena offsets
    prepared_bytes: int = 0  # the arena's leading region they take (marker included); 0: none


    def sharing(self) -> dict:
        """What shares bytes, counted (for report.json and `mlcc inspect`)."""
        kinds = {"view": "views", "concat": "written_into_concat", "strided": "written_into_concat_channels",
                 "in-place": "in_place", "placed": "placed_in_concat", "room": "in_output_buffers",
                 "tail": "at_output_ends"}
        counts = {word: 0 for word in kinds.values()}
        for a in self.aliases:
            counts[kinds[a.link.kind]] += 1
        return {**counts, "steps_without_code": len(self.elided_steps), "strategy": self.strategy}

    def offset_of(self, value: Value) -> int | None:
        """A tensor's arena offset (its own buffer's, or inside the buffer it shares); None outside the arena."""
        alias = self.alias_of().get(id(value))
        root, extra = (alias.root, alias.offset) if alias else (value, 0)
        return next((b.offset + extra for b in self.buffers if b.value is root), None)

    def alias_of(self) -> dict[int, Alias]:
        return {id(a.value): a for a in self.aliases}

    def verify(self) -> None:
        """No two tensors that are live at the same time share a byte, and every step reads the bytes it
        expects (views, Concat ranges and in-place writes included): see check.py."""
        for i, a in enumerate(self.buffers):
            for b in self.buffers[i + 1:]:
                lifetimes_overlap = a.first <= b.last and b.first <= a.last
                bytes_overlap = a.offset < b.offset + b.size and b.offset < a.offset + a.size
                if lifetimes_overlap and bytes_overlap and a.size and b.size:
                    raise MlccError(f"memory plan overlaps {a.value.name!r} and {b.value.name!r}")
        if self.steps:
            from .check import simulate

            simulate(self)


@dataclass
class _Candidate:
    order: list[int]
    sharing: Sharing
    buffers: list[Buffer]
    lower_bound: int
    peak_step: int
    peak: list[Buffer]
    arena: int = 0
    strategy: str = ""
    moved: dict = field(default_factory=dict)  # id(root) -> (graph output, offset, kind): output_room.place


def _evaluate(program: Program, order: list[int], output_room: bool = True) -> _Candidate:
    steps = [program.steps[i] for i in order]
    sharing = Sharing(program.graph, steps).decide()
    buffers: dict[int, Buffer] = {}
    for index, step in enumerate(steps):
        for v in [*step.reads, *step.writes]:
            if id(v) in buffers or id(v) in sharing.external or v.is_const or id(v) in sharing.links:
                continue
            first, last = sharing.span[id(v)]
            buffers[id(v)] = Buffer(v, first, last, _aligned(v.nbytes))
        for v in step.scratch:
            buffers[id(v)] = Buffer(v, index, index, _aligned(v.nbytes))
    moved = _output_room.place(program.graph, steps, sharing, list(buffers.values())) if output_room else {}
    listed = [b for b in buffers.values() if id(b.value) not in moved]
    live = [0] * (len(steps) + 1)
    for b in listed:
        live[b.first] += b.size
        live[b.last + 1] -= b.size
    peak, peak_step, running = 0, 0, 0
    for index in range(len(steps)):
        running += live[index]
        if running > peak:
            peak, peak_step = running, index
    at_peak = sorted((b for b in listed if b.first <= peak_step <= b.last and b.size), key=lambda b: (-b.size, b.value.name))
    return _Candidate(order, sharing, listed, peak, peak_step, at_peak, moved=moved)


def _prepared_region(program: Program) -> tuple[list[tuple[Value, int]], int]:
    """The weights prepared at load time at their offsets after the marker, and the region's bytes."""
    if not program.preparations:
        return [], 0
    placed, offset = [], PREPARED_MARKER_BYTES
    for p in program.preparations:
        placed.append((p.value, offset))
        offset += _aligned(p.value.nbytes)
    return placed, offset


def plan_memory(program: Program, output_room: bool = True) -> MemoryPlan:
    """Choose the schedule (program.steps is reordered to it), the sharing and the offsets; output_room:
    intermediates may live in the graph outputs' buffers before they are written (step 3)."""
    best = None
    for name, order in _schedule.candidates(program):
        candidate = _evaluate(program, order, output_room)
        candidate.strategy = f"schedule {name}; offsets {_assign.assign(candidate.buffers, candidate.lower_bound, ALIGN)}"
        candidate.arena = max((b.offset + b.size for b in candidate.buffers), default=0)
        if best is None or (candidate.arena, candidate.lower_bound) < (best.arena, best.lower_bound):
            best = candidate
    if best is None:  # no steps at all
        best = _evaluate(program, [], output_room)
    program.steps[:] = [program.steps[i] for i in best.order]
    sharing = best.sharing
    aliases: dict[int, Alias] = {}
    for step in program.steps:
        for v in [*step.reads, *step.writes]:
            if id(v) in aliases:
                continue
            if id(v) in sharing.links:
                root, offset = sharing.root(v)
                if id(root) in best.moved:  # its tree lives in a graph output's buffer
                    out, room_offset, _ = best.moved[id(root)]
                    root, offset = out, offset + room_offset
                aliases[id(v)] = Alias(v, root, offset, sharing.links[id(v)])
            elif id(v) in best.moved:
                out, offset, kind = best.moved[id(v)]
                aliases[id(v)] = Alias(v, out, offset, Link(out, offset, kind))
    intermediates = {id(v): v for s in program.steps for v in [*s.writes, *s.scratch]
                     if id(v) not in sharing.external and not v.is_const}
    prepared, prepared_bytes = _prepared_region(program)
    for b in best.buffers:
        b.offset += prepared_bytes
    plan = MemoryPlan(
        buffers=sorted(best.buffers, key=lambda b: (b.first, b.value.name)),
        arena_bytes=best.arena + prepared_bytes,
        lower_bound_bytes=best.lower_bound + prepared_bytes,
        intermediates_bytes=sum(_aligned(v.nbytes) for v in intermediates.values()) + prepared_bytes,
        peak_step=best.peak_step,
        peak_values=[b.value.name for b in best.peak],
        peak_bytes=[b.size for b in best.peak],
        aliases=list(aliases.values()),
        elided_steps=set(sharing.elided),
        steps=list(program.steps),
        external=set(sharing.external),
        strategy=best.strategy,
        prepared=prepared,
        prepared_bytes=prepared_bytes,
    )
    plan.verify()
    return plan


__all__ = ["ALIGN", "Alias", "Buffer", "GreedyPlan", "MemoryPlan", "greedy_by_size", "plan_memory"]
