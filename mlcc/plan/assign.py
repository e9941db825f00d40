"""Offset assignment: tensors with known lifetimes and sizes get arena offsets; no two that are live at the
same step share a byte.

Several greedy placements are tried and the one with the smallest arena kept (ties: the first tried). Each
takes the tensors in one order (largest first, as TFLite Micro; longest-lived first; largest size x
lifetime first; earliest first) and puts each either at the lowest offset where it fits between the tensors
already placed whose lifetimes overlap its own (first fit), or in the smallest such gap (best fit).
"""

from __future__ import annotations

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


def _place(buffers: list, best_fit: bool) -> tuple[list[int], int]:
    n = len(buffers)
    first = np.array([b.first for b in buffers], dtype=np.int64)
    last = np.array([b.last for b in buffers], dtype=np.int64)
    start = np.zeros(n, dtype=np.int64)
    end = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=bool)
    for i, b in enumerate(buffers):
        if b.size == 0:
            continue
        live = placed & (first <= b.last) & (last >= b.first)
        order = np.argsort(start[live], kind="stable")
        s, e = start[live][order], end[live][order]
        cursor, chosen, chosen_gap = 0, None, None
        for lo, hi in zip(s.tolist(), e.tolist()):
            gap = lo - cursor
            if gap >= b.size and (chosen is None or (best_fit and gap < chosen_gap)):
                chosen, chosen_gap = cursor, gap
                if not best_fit:
                    break
            cursor = max(cursor, hi)
        start[i] = cursor if chosen is None else chosen
        end[i] = start[i] + b.size
        placed[i] = True
    return start.tolist(), int(end.max()) if n else 0


def assign(buffers: list[Placeable]) -> str:
    """Set every buffer's offset (already aligned sizes give aligned offsets); returns the winning strategy."""
    best = None
    for name, key in ORDERS:
        ordered = sorted(buffers, key=key)
        for best_fit in (False, True):
            offsets, arena = _place(ordered, best_fit)
            if best is None or arena < best[0]:
                best = (arena, ordered, offsets, f"{name}, {'best' if best_fit else 'first'} fit")
    if best is None:
        return "none"
    _, ordered, offsets, strategy = best
    for b, offset in zip(ordered, offsets):
        b.offset = offset
    return strategy
