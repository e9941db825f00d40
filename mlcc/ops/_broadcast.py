"""Index arithmetic for loops over broadcast operands, shared by ops that render elementwise loops.

Computed in Python so templates only print: `loop_nest(out_shape, [in_shape, ...])` coalesces dims that
are contiguous in every operand and gives each operand its element strides (0 where it broadcasts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..cexpr import is_one, is_variable, same, text


@dataclass
class LoopNest:
    extents: list[int]  # loop trip counts, outermost first ([1] for a scalar)
    out_index: str  # C index expression for the output
    operand_index: list[str]  # C index expression per operand
    scalar: bool = False  # one element: every index is 0, and a template may write no loop at all

    @property
    def flat(self) -> bool:
        return len(self.extents) <= 1


def _strides(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> list[int]:
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides, step = [], 1
    for dim in reversed(padded):
        strides.append(step if not is_one(dim) else 0)
        step *= dim
    strides = strides[::-1]
    return [0 if is_one(padded[i]) and not is_one(out_shape[i]) else strides[i] for i in range(len(out_shape))]


def loop_nest(out_shape: tuple[int, ...], operand_shapes: list[tuple[int, ...]]) -> LoopNest:
    """Run-time extents (cexpr.Sym) keep their loops; dims merge only where they step alike at every size."""
    out_shape = tuple(d if is_variable(d) else int(d) for d in out_shape)
    if math.prod(out_shape) == 0:
        return LoopNest([0], "i0", ["0"] * len(operand_shapes))
    dims = [d for d in range(len(out_shape)) if not is_one(out_shape[d])]
    extents = [out_shape[d] for d in dims]
    all_strides = [_strides(out_shape, out_shape)] + [_strides(s, out_shape) for s in operand_shapes]
    per = [[s[d] for d in dims] for s in all_strides]
    # merge dim k into k-1 where every operand steps contiguously across the boundary
    k = len(extents) - 1
    while k > 0:
        if all(same(p[k - 1], p[k] * extents[k]) for p in per):
            extents[k - 1] *= extents[k]
            for p in per:
                p[k - 1] = p[k]
                del p[k]
            del extents[k]
        k -= 1
    scalar = not extents
    if scalar:
        extents, per = [1], [[0] for _ in per]

    def index(strides: list[int]) -> str:
        terms = [f"i{d}" if is_one(s) else f"i{d} * {text(s)}" for d, s in enumerate(strides) if not same(s, 0)]
        return " + ".join(terms) or "0"

    return LoopNest(extents, index(per[0]), [index(p) for p in per[1:]], scalar)
