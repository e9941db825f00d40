"""Planner invariants on synthetic programs: no live overlap, alignment, lower bound, sharing."""

import numpy as np
import pytest

from mlcc.ir import Graph, Node, Value
from mlcc.lower import Program, Step
from mlcc.plan import ALIGN, plan_memory
from mlcc.targets import resolve


def chain_program(sizes, branchy=False):
    """x -> n0 -> n1 -> ... ; each value's size in floats from `sizes`."""
    g = Graph("synthetic")
    x = Value("x", np.dtype("float32"), (4,))
    g.inputs.append(x)
    prev, steps = x, []
    values = []
    for i, n in enumerate(sizes):
        v = Value(f"v{i}", np.dtype("float32"), (n,))
        inputs = [prev] + ([values[i - 2]] if branchy and i >= 2 else [])
        node = Node("Relu", f"n{i}", inputs, [v])
        g.nodes.append(node)
        steps.append(Step(node))
        values.append(v)
        prev = v
    g.outputs, g.output_names = [prev], [prev.name]
    return Program(g, resolve("wasm32"), steps, {}, [], [])


@pytest.mark.parametrize("branchy", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_no_overlap_and_meets_bounds(seed, branchy):
    rng = np.random.default_rng(seed)
    program = chain_program(list(rng.integers(1, 5000, 30)), branchy)
    plan = plan_memory(program)
    plan.verify()
    assert all(b.offset % ALIGN == 0 for b in plan.buffers)
    assert plan.lower_bound_bytes <= plan.arena_bytes <= plan.intermediates_bytes


def test_chain_reuses_memory():
    plan = plan_memory(chain_program([1000] * 10))
    # in a chain only a producer and its consumer are live together: two buffers suffice
    assert plan.arena_bytes == 2 * 4032
    assert plan.lower_bound_bytes == plan.arena_bytes
    assert plan.intermediates_bytes == 9 * 4032  # the last value is the graph output, not in the arena


def test_verify_catches_overlap():
    plan = plan_memory(chain_program([100, 100, 100]))
    a, b = plan.buffers[0], plan.buffers[1]
    b.offset = a.offset
    with pytest.raises(Exception, match="overlaps"):
        plan.verify()
