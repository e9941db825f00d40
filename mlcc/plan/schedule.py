"""Candidate schedules: topological orders of the program's steps, the model's own order first."""

from __future__ import annotations

from ..lower import Program


def candidates(program: Program) -> list[tuple[str, list[int]]]:
    return [("as given", list(range(len(program.steps))))]
