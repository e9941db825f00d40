"""Offset assignment: tensors with known lifetimes and sizes get arena offsets; no two that are live at the
same step share a byte.

First, greedy placements: the tensors in one order (largest first, as TFLite Micro; longest-lived first;
largest size x lifetime first; earliest first), each put at the lowest offset where it fits between the
already placed tensors whose lifetimes overlap its own (first fit), or in the smallest such gap (best
fit). When the best of those is above the lower bound, a sweep over time tries to fit everything under a
fixed height (the lower bound, then up to 5% more): tensors in order of their first step (longer-lived
first), each at the end of a gap (against the tensor below or above it) where the largest free block left
at the next steps of its life is the largest; where that fails, the same sweep over the tensors with time
reversed (a schedule's mirror has the same overlaps, and a plan for it is one for the schedule: DenseNet-121's
fits its lower bound only so on wasm32). The smallest arena found is kept (ties: the first found).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np


class Placeable(Protocol):
    first: int
    last: int
    size: int
    offset: int


ORDERS: list[tuple[str, Callable]] = [
    ("size", lambda b: (-b.size, b.first)),
    ("lifetime", lambda b: (-(b.last - b.first), -b.size, b.first)),
    ("area", lambda b: (-b.size * (b.last - b.first + 1), b.first)),
    ("first", lambda b: (b.first, -b.size)),
]
SWEEP_ORDER = ("sweep", lambda b: (b.first, -(b.last - b.first), -b.size))
SWEEP_HEIGHTS = (1.0, 1.01, 1.02, 1.03, 1.05)  # times the lower bound
SWEEP_MAX_WORK = 2_000_000  # conflict pairs x steps: beyond this the sweep is skipped (greedy results stand)


@dataclass
class _Span:
    first: int
    last: int
    size: int


def _conflicts(buffers: list) -> list[list[int]]:
    """For each buffer, the others live at some same step (sized ones only)."""
    first = np.array([b.first for b in buffers], dtype=np.int64)
    last = np.array([b.last for b in buffers], dtype=np.int64)
    sized = np.array([b.size > 0 for b in buffers], dtype=bool)
    found = []
    for i, b in enumerate(buffers):
        mask = sized & (first <= b.last) & (last >= b.first)
        mask[i] = False
        found.append(np.nonzero(mask)[0].tolist() if b.size else [])
    return found


def _greedy(buffers: list, order: list[int], conflicts: list[list[int]], best_fit: bool) -> list[int]:
    offsets = [-1] * len(buffers)
    for i in order:
        size = buffers[i].size
        if size == 0:
            offsets[i] = 0
            continue
        busy = sorted((offsets[j], offsets[j] + buffers[j].size) for j in conflicts[i] if offsets[j] >= 0)
        cursor, chosen, chosen_gap = 0, None, 0
        for lo, hi in busy:
            gap = lo - cursor
            if gap >= size and (chosen is None or (best_fit and gap < chosen_gap)):
                chosen, chosen_gap = cursor, gap
                if not best_fit:
                    break
            cursor = max(cursor, hi)
        offsets[i] = cursor if chosen is None else chosen
    return offsets


def _largest_free(intervals: list[tuple[int, int]], height: int) -> int:
    largest, cursor = 0, 0
    for lo, hi in sorted(intervals):
        largest = max(largest, lo - cursor)
        cursor = max(cursor, hi)
    return max(largest, height - cursor)


def _sweep(buffers: list, order: list[int], conflicts: list[list[int]], height: int, align: int) -> list[int] | None:
    offsets = [-1] * len(buffers)
    for i in order:
        b = buffers[i]
        if b.size == 0:
            offsets[i] = 0
            continue
        placed = [j for j in conflicts[i] if offsets[j] >= 0]
        cursor, positions = 0, set()
        for lo, hi in sorted((offsets[j], offsets[j] + buffers[j].size) for j in placed):
            if lo - cursor >= b.size:
                positions.update((cursor, (lo - b.size) // align * align))
            cursor = max(cursor, hi)
        if height - cursor >= b.size:
            positions.update((cursor, (height - b.size) // align * align))
        if not positions:
            return None

        def room_left(p: int) -> tuple[int, int]:
            room = 0
            for step in (b.first + 1, b.last + 1):  # once the tensors dying now have gone, and once b has
                live = [(offsets[j], offsets[j] + buffers[j].size) for j in placed if buffers[j].first <= step <= buffers[j].last]
                if step <= b.last:
                    live.append((p, p + b.size))
                room += _largest_free(live, height)
            return room, -p

        offsets[i] = max(sorted(positions), key=room_left)
    return offsets


def assign(buffers: list[Placeable], lower_bound: int = 0, align: int = 1) -> str:
    """Set every buffer's offset (sizes multiples of `align` give aligned offsets); returns the strategy
    that won."""
    if not buffers:
        return "none"
    conflicts = _conflicts(buffers)
    best: tuple[int, list[int], str] | None = None

    def consider(offsets: list[int] | None, strategy: str) -> None:
        nonlocal best
        if offsets is not None:
            arena = max(o + b.size for o, b in zip(offsets, buffers))
            if best is None or arena < best[0]:
                best = (arena, offsets, strategy)

    for name, key in ORDERS:
        order = sorted(range(len(buffers)), key=lambda i: key(buffers[i]))
        for best_fit in (False, True):
            consider(_greedy(buffers, order, conflicts, best_fit), f"{name}, {'best' if best_fit else 'first'} fit")
    work = sum(len(c) for c in conflicts) * 2
    if best[0] > lower_bound and work <= SWEEP_MAX_WORK:
        order = sorted(range(len(buffers)), key=lambda i: SWEEP_ORDER[1](buffers[i]))
        end = max(b.last for b in buffers)
        mirrored = [_Span(end - b.last, end - b.first, b.size) for b in buffers]
        mirrored_order = sorted(range(len(mirrored)), key=lambda i: SWEEP_ORDER[1](mirrored[i]))
        for factor in SWEEP_HEIGHTS:
            height = -(-int(lower_bound * factor) // align) * align
            if height >= best[0]:
                break
            offsets = _sweep(buffers, order, conflicts, height, align)
            direction = ""
            if offsets is None:  # the same tensors with time reversed: a plan for them is a plan for these
                offsets = _sweep(mirrored, mirrored_order, conflicts, height, align)
                direction = " backwards in time"
            if offsets is not None:
                consider(offsets, f"sweep under {factor:g} x the lower bound{direction}")
                break
    _, offsets, strategy = best
    for b, offset in zip(buffers, offsets):
        b.offset = offset
    return strategy
