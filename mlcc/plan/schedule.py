"""Candidate schedules: topological orders of the program's steps, for the planner to judge.

  as given      the model's own order (kept when no other is strictly better)
  depth first   among the steps ready to run, the one reading what was produced most recently: a branch is
                finished before the next one starts, so fewer branch results wait at once
  frees most    among the steps ready to run, the one with the smallest bytes written minus bytes freed
                (inputs it is the last reader of); ties go to the model's order

Every order is deterministic: ties always fall back to the model's own order.
"""

from __future__ import annotations

import heapq

from ..lower import Program


def _graph(program: Program) -> tuple[list[list[int]], list[int], list[list[int]]]:
    """Per step: the steps it must follow, how many, and the steps that follow it."""
    writer = {id(v): i for i, s in enumerate(program.steps) for v in s.writes}
    preds = [sorted({writer[id(v)] for v in s.reads if id(v) in writer and writer[id(v)] != i})
             for i, s in enumerate(program.steps)]
    succs: list[list[int]] = [[] for _ in program.steps]
    for i, ps in enumerate(preds):
        for p in ps:
            succs[p].append(i)
    return preds, [len(p) for p in preds], succs


def depth_first(program: Program) -> list[int]:
    preds, waiting, succs = _graph(program)
    clock, recency = 0, [0] * len(program.steps)  # when each step became ready by its latest input
    ready = [(0, i) for i, w in enumerate(waiting) if w == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        clock += 1
        for j in succs[i]:
            waiting[j] -= 1
            recency[j] = clock
            if waiting[j] == 0:
                heapq.heappush(ready, (-recency[j], j))
    return order


def frees_most(program: Program) -> list[int]:
    steps = program.steps
    external = {id(v) for v in program.graph.inputs} | {id(v) for v in program.graph.outputs}
    readers: dict[int, int] = {}
    for s in steps:
        for v in {id(v): v for v in s.reads}.values():
            readers[id(v)] = readers.get(id(v), 0) + 1
    preds, waiting, succs = _graph(program)
    written = [sum(v.nbytes for v in [*s.writes, *s.scratch] if id(v) not in external) for s in steps]
    ready = {i for i, w in enumerate(waiting) if w == 0}
    order = []
    while ready:
        def score(i: int) -> tuple[int, int]:
            reads = {id(v): v for v in steps[i].reads}.values()
            freed = sum(v.nbytes for v in reads if readers[id(v)] == 1 and id(v) not in external)
            return written[i] - freed, i
        i = min(ready, key=score)
        ready.remove(i)
        order.append(i)
        for v in {id(v): v for v in steps[i].reads}.values():
            readers[id(v)] -= 1
        for j in succs[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                ready.add(j)
    return order


def candidates(program: Program) -> list[tuple[str, list[int]]]:
    given = list(range(len(program.steps)))
    found = [("as given", given)]
    for name, make in (("depth first", depth_first), ("frees most", frees_most)):
        order = make(program)
        if len(order) == len(given) and all(order != other for _, other in found):
            found.append((name, order))
    return found
