"""The planner's contract, checked by running the schedule over byte ranges instead of data.

Every byte of the arena and of the caller's buffers records which tensor last wrote it (and at which offset
of that tensor). A tensor's bytes are one range, or for a channel slice of a Concat one range per row. Steps
run in order; a step with code first checks that each tensor it reads holds what
that tensor must hold (its own bytes, or for a view or an elided Concat the bytes of what it shows), that
nothing it writes overlaps what it reads (except an in-place output exactly over its input, or an output over
an input at its end that the op reads as it writes: Op.tail_inputs) and that its
writes stay inside the arena, then records its writes. At the end each graph output must hold its value.
"""

from __future__ import annotations

from bisect import bisect_right
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


Ranges = list[tuple[int, int, int]]  # (start in the space, bytes, offset in the tensor), ascending


class _Memory:
    def __init__(self):
        self.spaces: dict[object, list[Segment]] = {}

    def read(self, space, ranges: Ranges) -> list[Segment]:
        """What the tensor laid out over `ranges` holds, in its own byte offsets (never written: None)."""
        segments = self.spaces.get(space, [])
        ends = [s[1] for s in segments]
        out: list[Segment] = []
        for start, n, shift in ranges:
            i, cursor = bisect_right(ends, start), start
            while i < len(segments) and segments[i][0] < start + n:
                s0, s1, tag, tag_offset = segments[i]
                lo, hi = max(s0, start), min(s1, start + n)
                if lo > cursor:
                    out.append((cursor - start + shift, lo - start + shift, None, 0))
                out.append((lo - start + shift, hi - start + shift, tag, tag_offset + lo - s0))
                cursor, i = hi, i + 1
            if cursor < start + n:
                out.append((cursor - start + shift, n + shift, None, 0))
        return _normal(out)

    def write(self, space, ranges: Ranges, tag: int) -> None:
        new = [(start, start + n, tag, shift) for start, n, shift in ranges]
        kept, j = [], 0
        for s0, s1, t, o in self.spaces.get(space, []):  # keep the parts of old segments outside `ranges`
            while j < len(new) and new[j][1] <= s0:
                j += 1
            cursor, k = s0, j
            while k < len(new) and new[k][0] < s1:
                if new[k][0] > cursor:
                    kept.append((cursor, new[k][0], t, o + cursor - s0))
                cursor, k = max(cursor, new[k][1]), k + 1
            if cursor < s1:
                kept.append((cursor, s1, t, o + cursor - s0))
        self.spaces[space] = sorted(kept + new)


def _overlap(a: Ranges, b: Ranges) -> bool:
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][0] < b[j][0] + b[j][1] and b[j][0] < a[i][0] + a[i][1]:
            return True
        if a[i][0] + a[i][1] <= b[j][0] + b[j][1]:
            i += 1
        else:
            j += 1
    return False


def _layout(v, start: int, pitch: int) -> Ranges:
    """The bytes of tensor v from `start`: one range, or with a row pitch one range per row of its last dim."""
    if not pitch:
        return [(start, v.nbytes, 0)]
    row = v.shape[-1] * v.dtype.itemsize
    return [(start + r * pitch, row, r * row) for r in range(v.nbytes // row)]


def simulate(plan: "MemoryPlan") -> None:
    alias = plan.alias_of()
    offsets = {id(b.value): b.offset for b in plan.buffers}
    names: dict[int | None, str] = {None: "nothing"}
    # elided step outputs: ("view", [(x, offset, 0)]) or ("concat", [(part, offset, row pitch or 0)...])
    shown: dict[int, tuple[str, list]] = {}
    for index in plan.elided_steps:
        node = plan.steps[index].node
        op = ops.lookup(node.op_type, node.domain)
        if op.gathers_inputs:
            ranges = op.input_offsets(node)
            if ranges is None:  # channel slices, written at the output's row pitch
                sources = [(p, alias[id(p)].link.offset, alias[id(p)].link.pitch) for p in node.inputs]
            else:
                sources = [(p, offset, 0) for p, offset in zip(node.inputs, ranges)]
            shown[id(node.outputs[0])] = ("concat", sources)
        else:
            for y, offset in zip(node.outputs, op.view_offsets(node)):
                shown[id(y)] = ("view", [(node.inputs[0], offset, 0)])

    def where(v) -> tuple[object, Ranges]:
        a = alias.get(id(v))
        root, offset, pitch = (a.root, a.offset, a.link.pitch) if a else (v, 0, 0)
        if id(root) in plan.external:
            return id(root), _layout(v, offset, pitch)
        if id(root) not in offsets:
            raise MlccError(f"memory plan: {v.name!r} has no place")
        return "arena", _layout(v, offsets[id(root)] + offset, pitch)

    @lru_cache(maxsize=None)
    def expected(key: int) -> tuple[Segment, ...]:
        v = values[key]
        names[id(v)] = v.name
        if id(v) not in shown:
            return ((0, v.nbytes, id(v), 0),)
        kind, sources = shown[id(v)]
        if kind == "view":
            x, offset, _ = sources[0]
            return tuple(_cut(list(expected(id(x))), offset, offset + v.nbytes, 0))
        return tuple(_normal(sorted(s for p, offset, pitch in sources for start, n, shift in _layout(p, offset, pitch)
                                    for s in _cut(list(expected(id(p))), shift, shift + n, start))))

    values = {id(v): v for s in plan.steps for v in [*s.node.inputs, *s.node.outputs] if v is not None}
    memory = _Memory()
    for s in plan.steps:
        for v in s.node.inputs:
            if v is not None and id(v) in plan.external and id(v) not in memory.spaces and not v.is_const:
                memory.write(id(v), [(0, v.nbytes, 0)], id(v))  # a graph input, as the caller passes it
                names[id(v)] = v.name

    def check_holds(v, what: str) -> None:
        got, want = memory.read(*where(v)), _normal(list(expected(id(v))))
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
        tails = {id(node.inputs[i]) for i in op.tail_inputs(node)} if op is not None else set()
        spans = [(v, *where(v)) for v in writes]
        for v, space, ranges in spans:
            if space == "arena" and not 0 <= ranges[0][0] <= ranges[-1][0] + ranges[-1][1] <= plan.arena_bytes:
                raise MlccError(f"memory plan: {v.name!r} lies outside the arena")
            for w, w_space, w_ranges in spans:
                if w is not v and w_space == space and _overlap(ranges, w_ranges):
                    raise MlccError(f"memory plan overlaps {v.name!r} and {w.name!r}, both written at step {index}")
            for r in reads:
                r_space, r_ranges = where(r)
                if r_space == space and _overlap(ranges, r_ranges):
                    exact = r_ranges == ranges and r.nbytes == v.nbytes and id(r) in in_place
                    at_end = (id(r) in tails and len(ranges) == len(r_ranges) == 1
                              and r_ranges[0][0] + r_ranges[0][1] == ranges[0][0] + ranges[0][1]
                              and r_ranges[0][0] >= ranges[0][0] and r.size == v.size)
                    if not (exact or at_end):
                        raise MlccError(f"memory plan overlaps {v.name!r} and {r.name!r}, written and read at step {index}")
        for v, space, ranges in spans:
            memory.write(space, ranges, id(v))
            names[id(v)] = v.name
    written = {id(v) for s in plan.steps for v in s.writes}
    for v in {id(v): v for v in values.values() if id(v) in plan.external and id(v) in written}.values():
        if v.nbytes:
            check_holds(v, "the graph output")
