"""The planner's contract, checked by running the schedule over byte ranges instead of data.

Every byte of the arena and of the caller's buffers records which tensor last wrote it (and at which offset
of that tensor). Steps run in order; a step with code first checks that each tensor it reads holds what
that tensor must hold (its own bytes, or for a view or an elided Concat the bytes of what it shows), that
nothing it writes overlaps what it reads (except an in-place output exactly over its input) and that its
writes stay inside the arena, then records its writes. At the end each graph output must hold its value.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from .. import ops
from ..errors import MlccError

if TYPE_CHECKING:
    from . import MemoryPlan

Segment = tuple[int, int, int | None, int]  # [start, end) holds tensor id (None: never written) from its byte offset


def _normal(segments: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for s in segments:
        if s[1] <= s[0]:
            continue
        if out and out[-1][2] == s[2] and out[-1][1] == s[0] and out[-1][3] + (out[-1][1] - out[-1][0]) == s[3]:
            out[-1] = (out[-1][0], s[1], s[2], out[-1][3])
        else:
            out.append(s)
    return out


def _cut(segments: list[Segment], start: int, end: int, shift: int) -> list[Segment]:
    """The part of `segments` in [start, end), moved by -start+shift."""
    out = []
    for s0, s1, tag, tag_offset in segments:
        lo, hi = max(s0, start), min(s1, end)
        if lo < hi:
            out.append((lo - start + shift, hi - start + shift, tag, tag_offset + lo - s0))
    return out


class _Memory:
    def __init__(self):
        self.spaces: dict[object, list[Segment]] = {}

    def read(self, space, start: int, n: int) -> list[Segment]:
        held = _cut(self.spaces.get(space, []), start, start + n, 0)
        gaps, cursor = [], 0
        for s in held:  # bytes never written read as None
            if s[0] > cursor:
                gaps.append((cursor, s[0], None, 0))
            cursor = s[1]
        if cursor < n:
            gaps.append((cursor, n, None, 0))
        return _normal(sorted(held + gaps))

    def write(self, space, start: int, n: int, tag: int) -> None:
        kept = [s for s in self.spaces.get(space, []) if s[1] <= start or s[0] >= start + n]
        cut = [s for s in self.spaces.get(space, []) if not (s[1] <= start or s[0] >= start + n)]
        for s0, s1, t, o in cut:  # keep the parts outside [start, start + n)
            if s0 < start:
                kept.append((s0, start, t, o))
            if s1 > start + n:
                kept.append((start + n, s1, t, o + start + n - s0))
        self.spaces[space] = sorted(kept + [(start, start + n, tag, 0)])


def simulate(plan: "MemoryPlan") -> None:
    alias = plan.alias_of()
    offsets = {id(b.value): b.offset for b in plan.buffers}
    names: dict[int | None, str] = {None: "nothing"}
    shown: dict[int, tuple[str, list]] = {}  # elided step outputs: ("view", [(x, offset)]) or ("concat", [(p, offset)...])
    for index in plan.elided_steps:
        node = plan.steps[index].node
        op = ops.lookup(node.op_type, node.domain)
        if op.gathers_inputs:
            shown[id(node.outputs[0])] = ("concat", list(zip(node.inputs, op.input_offsets(node))))
        else:
            for y, offset in zip(node.outputs, op.view_offsets(node)):
                shown[id(y)] = ("view", [(node.inputs[0], offset)])

    def where(v) -> tuple[object, int]:
        a = alias.get(id(v))
        root, offset = (a.root, a.offset) if a else (v, 0)
        if id(root) in plan.external:
            return id(root), offset
        if id(root) not in offsets:
            raise MlccError(f"memory plan: {v.name!r} has no place")
        return "arena", offsets[id(root)] + offset

    @lru_cache(maxsize=None)
    def expected(key: int) -> tuple[Segment, ...]:
        v = values[key]
        names[id(v)] = v.name
        if id(v) not in shown:
            return ((0, v.nbytes, id(v), 0),)
        kind, sources = shown[id(v)]
        if kind == "view":
            x, offset = sources[0]
            return tuple(_cut(list(expected(id(x))), offset, offset + v.nbytes, 0))
        return tuple(_normal(sorted(s for p, offset in sources for s in _cut(list(expected(id(p))), 0, p.nbytes, offset))))

    values = {id(v): v for s in plan.steps for v in [*s.node.inputs, *s.node.outputs] if v is not None}
    memory = _Memory()
    for s in plan.steps:
        for v in s.node.inputs:
            if v is not None and id(v) in plan.external and id(v) not in memory.spaces and not v.is_const:
                memory.write(id(v), 0, v.nbytes, id(v))  # a graph input, as the caller passes it
                names[id(v)] = v.name

    def check_holds(v, what: str) -> None:
        space, start = where(v)
        got, want = memory.read(space, start, v.nbytes), _normal(list(expected(id(v))))
        if got != want:
            wrong = next((g for g in got if g not in want), got[0])
            raise MlccError(f"memory plan: {what} {v.name!r} but its bytes hold {names.get(wrong[2], '?')!r}")

    for index, step in enumerate(plan.steps):
        if index in plan.elided_steps:
            continue
        node = step.node
        reads = [v for v in step.reads if v.nbytes]
        for v in reads:
            check_holds(v, f"step {index} ({node.name}) reads")
        writes = [v for v in [*step.writes, *step.scratch] if v.nbytes]
        op = ops.lookup(node.op_type, node.domain)
        in_place = {id(node.inputs[i]) for i in op.in_place_inputs(node)} if op is not None else set()
        spans = [(v, *where(v)) for v in writes]
        for v, space, start in spans:
            if space == "arena" and not 0 <= start <= start + v.nbytes <= plan.arena_bytes:
                raise MlccError(f"memory plan: {v.name!r} lies outside the arena")
            for w, w_space, w_start in spans:
                if w is not v and w_space == space and w_start < start + v.nbytes and start < w_start + w.nbytes:
                    raise MlccError(f"memory plan overlaps {v.name!r} and {w.name!r}, both written at step {index}")
            for r in reads:
                r_space, r_start = where(r)
                if r_space == space and r_start < start + v.nbytes and start < r_start + r.nbytes:
                    exact = r_start == start and r.nbytes == v.nbytes and id(r) in in_place
                    if not exact:
                        raise MlccError(f"memory plan overlaps {v.name!r} and {r.name!r}, written and read at step {index}")
        for v, space, start in spans:
            memory.write(space, start, v.nbytes, id(v))
            names[id(v)] = v.name
    written = {id(v) for s in plan.steps for v in s.writes}
    for v in {id(v): v for v in values.values() if id(v) in plan.external and id(v) in written}.values():
        if v.nbytes:
            check_holds(v, "the graph output")
