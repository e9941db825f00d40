"""Planner invariants: no live overlap, alignment, lower bound; views, Concat ranges and in-place execution
only where safe. Synthetic programs (no C) and tiny ONNX graphs planned without compiling."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend, lower, passes, plan as planner
from mlcc.errors import MlccError
from mlcc.ir import Graph, Node, Value
from mlcc.lower import Program, Step
from mlcc.plan import ALIGN, assign, plan_memory
from mlcc.targets import resolve

F32 = np.dtype("float32")


def chain_program(sizes, branchy=False, op="Softmax"):
    """x -> n0 -> n1 -> ... ; each value's size in floats from `sizes` (Softmax: never in place)."""
    g = Graph("synthetic")
    x = Value("x", F32, (4,))
    g.inputs.append(x)
    prev, steps = x, []
    values = []
    for i, n in enumerate(sizes):
        v = Value(f"v{i}", F32, (n,))
        inputs = [prev] + ([values[i - 2]] if branchy and i >= 2 else [])
        node = Node(op, f"n{i}", inputs, [v], opset=17)
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
    plan = plan_memory(chain_program([100, 100, 100]), output_room=False)
    a, b = plan.buffers[0], plan.buffers[1]
    b.offset = a.offset
    with pytest.raises(MlccError, match="overlaps"):
        plan.verify()


def test_elementwise_chain_runs_in_place():
    plan = plan_memory(chain_program([1000] * 10, op="Relu"))
    assert len(plan.buffers) == 1 and plan.arena_bytes == 4032
    assert [a.link.kind for a in plan.aliases] == ["in-place"] * 8


def test_in_place_waits_for_the_last_reader():
    plan = plan_memory(chain_program([1000] * 6, branchy=True, op="Add"))  # v[i] = v[i-1] + v[i-2]
    # v[i] may overwrite v[i-2] (its last reader is step i), never v[i-1] (read again at step i+1)
    for a in plan.aliases:
        assert a.link.parent.name == f"v{int(a.value.name[1:]) - 2}"


# --- tiny ONNX graphs, planned without compiling ---------------------------------------------------------
def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def planned(nodes, inputs, outputs, initializers=(), output_room=False):
    """output_room: intermediates may live in the outputs' buffers (off: the tests of sharing alone)."""
    graph = helper.make_graph(nodes, "t", inputs, outputs, [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    g = frontend.import_model(model, name="t")
    for name in passes.pipeline(0):
        passes.get(name)(g, resolve("wasm32"))
    program = lower.lower_graph(g, resolve("wasm32"))
    return program, plan_memory(program, output_room)


def kinds(plan):
    return {a.value.name: (a.link.kind, a.link.parent.name, a.offset) for a in plan.aliases}


def elided_ops(program, plan):
    return sorted(program.steps[i].node.op_type for i in plan.elided_steps)


def test_reshape_of_an_intermediate_is_a_view():
    program, plan = planned([helper.make_node("Softmax", ["x"], ["s"]), helper.make_node("Reshape", ["s", "shape"], ["r"]),
                             helper.make_node("Softmax", ["r"], ["y"])],
                            [vi("x", [2, 6])], [vi("y", [3, 4])], [("shape", np.array([3, 4], np.int64))])
    assert kinds(plan) == {"r": ("view", "s", 0)}
    assert elided_ops(program, plan) == ["Reshape"]
    assert [b.value.name for b in plan.buffers] == ["s"]


def test_view_of_a_graph_input_points_into_it_and_a_graph_output_is_never_a_view():
    program, plan = planned([helper.make_node("Flatten", ["x"], ["f"]), helper.make_node("Softmax", ["f"], ["s"]),
                             helper.make_node("Reshape", ["s", "shape"], ["y"])],
                            [vi("x", [2, 3, 2])], [vi("y", [12])], [("shape", np.array([12], np.int64))])
    assert kinds(plan) == {"f": ("view", "x", 0)}
    assert elided_ops(program, plan) == ["Flatten"]  # the Reshape into the graph output copies


@pytest.mark.parametrize("starts,ends,axes,offset", [([1], [3], [0], 6 * 4), ([0, 2], [1, 4], [0, 1], 4 * 4),
                                                     ([1, 1, 0], [2, 2, 4], [0, 1, 2], 8 * 4)])
def test_contiguous_slice_is_a_view(starts, ends, axes, offset):
    program, plan = planned([helper.make_node("Softmax", ["x"], ["s"]),
                             helper.make_node("Slice", ["s", "st", "en", "ax"], ["v"]), helper.make_node("Softmax", ["v"], ["y"])],
                            [vi("x", [4, 3, 2])], [vi("y", None)],
                            [("st", np.array(starts, np.int64)), ("en", np.array(ends, np.int64)), ("ax", np.array(axes, np.int64))])
    assert kinds(plan) == {"v": ("view", "s", offset)}  # bytes


@pytest.mark.parametrize("starts,ends,axes,steps", [([0], [1], [1], [1]), ([0], [4], [0], [2]), ([3], [0], [0], [-1])])
def test_strided_slice_copies(starts, ends, axes, steps):
    program, plan = planned([helper.make_node("Softmax", ["x"], ["s"]),
                             helper.make_node("Slice", ["s", "st", "en", "ax", "sp"], ["v"]), helper.make_node("Softmax", ["v"], ["y"])],
                            [vi("x", [4, 3, 2])], [vi("y", None)],
                            [("st", np.array(starts, np.int64)), ("en", np.array(ends, np.int64)),
                             ("ax", np.array(axes, np.int64)), ("sp", np.array(steps, np.int64))])
    assert kinds(plan) == {} and plan.elided_steps == set()


@pytest.mark.parametrize("shape,axis,views", [([1, 6, 5], 1, True), ([6, 5], 0, True), ([2, 6, 5], 1, False)])
def test_split_is_a_view_when_outer_dims_are_one(shape, axis, views):
    program, plan = planned([helper.make_node("Softmax", ["x"], ["s"]), helper.make_node("Split", ["s"], ["a", "b"], axis=axis),
                             helper.make_node("Softmax", ["a"], ["ya"]), helper.make_node("Softmax", ["b"], ["yb"])],
                            [vi("x", shape)], [vi("ya", None), vi("yb", None)])
    if views:
        half = int(np.prod(shape)) * 4 // 2
        assert kinds(plan) == {"a": ("view", "s", 0), "b": ("view", "s", half)}
    else:
        assert kinds(plan) == {}


def conv_relu(name, x, channels, w_name):
    return [helper.make_node("Conv", [x, w_name], [f"{name}_c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [f"{name}_c"], [name])]


def test_concat_producers_write_into_their_ranges():
    rng = np.random.default_rng(0)
    nodes = [*conv_relu("a", "x", 4, "wa"), *conv_relu("b", "x", 6, "wb"),
             helper.make_node("Concat", ["a", "b"], ["cat"], axis=1), helper.make_node("Softmax", ["cat"], ["y"])]
    program, plan = planned(nodes, [vi("x", [1, 3, 5, 5])], [vi("y", None)],
                            [("wa", rng.standard_normal((4, 3, 3, 3)).astype(np.float32)),
                             ("wb", rng.standard_normal((6, 3, 3, 3)).astype(np.float32))])
    k = kinds(plan)
    assert k["a"] == ("concat", "cat", 0) and k["b"] == ("concat", "cat", 4 * 25 * 4)
    assert k["a_c"] == ("placed", "a", 4 * 25 * 4 * 0) and k["b_c"][:2] == ("placed", "b")  # conv writes there, Relu in place
    assert elided_ops(program, plan) == ["Concat"]


def test_concat_of_a_graph_input_or_a_repeated_input_copies():
    nodes = [helper.make_node("Softmax", ["x"], ["s"]), helper.make_node("Concat", ["s", "x"], ["c1"], axis=0),
             helper.make_node("Concat", ["s", "s"], ["c2"], axis=0),
             helper.make_node("Softmax", ["c1"], ["y1"]), helper.make_node("Softmax", ["c2"], ["y2"])]
    program, plan = planned(nodes, [vi("x", [2, 3])], [vi("y1", None), vi("y2", None)])
    assert plan.elided_steps == set()


def test_nested_concats_share_one_buffer():
    """DenseNet's pattern: each block's Concat appends to the previous one."""
    nodes = [helper.make_node("Softmax", ["x"], ["c0"])]
    for i in range(1, 4):
        nodes += [helper.make_node("Softmax", [f"c{i - 1}"], [f"n{i}"]), helper.make_node("Concat", [f"c{i - 1}", f"n{i}"], [f"c{i}"], axis=1)]
    nodes.append(helper.make_node("Softmax", ["c3"], ["y"]))
    program, plan = planned(nodes, [vi("x", [1, 2])], [vi("y", None)])
    assert len(plan.elided_steps) == 3
    roots = {a.value.name: a.root.name for a in plan.aliases}
    assert set(roots.values()) == {"c3"} and len(plan.buffers) == 1


def test_in_place_skips_broadcast_inputs_and_graph_inputs():
    nodes = [helper.make_node("Add", ["x", "b"], ["s"]),  # x is a graph input: never overwritten
             helper.make_node("Mul", ["s", "row"], ["m"]),  # s dies here and has the output's size: overwritten
             helper.make_node("Softmax", ["m"], ["t"]),
             helper.make_node("Add", ["col", "t"], ["y0"]), helper.make_node("Softmax", ["y0"], ["y"])]
    program, plan = planned(nodes, [vi("x", [3, 4]), vi("b", [3, 4]), vi("row", [1, 4]), vi("col", [3, 1])], [vi("y", None)])
    assert kinds(plan) == {"m": ("in-place", "s", 0), "y0": ("in-place", "t", 0)}


def test_verify_simulation_catches_a_wrong_in_place():
    program, plan = planned([helper.make_node("Softmax", ["x"], ["s"]), helper.make_node("Relu", ["s"], ["r"]),
                             helper.make_node("Add", ["r", "s"], ["y0"]), helper.make_node("Softmax", ["y0"], ["y"])],
                            [vi("x", [8])], [vi("y", None)])
    assert "r" not in kinds(plan)  # s is read again by the Add
    s = next(b for b in plan.buffers if b.value.name == "s")
    r = next(b for b in plan.buffers if b.value.name == "r")
    r.offset = s.offset  # pretend the Relu ran in place anyway: the Add would read r's values as s
    with pytest.raises(MlccError, match="overlaps|hold"):
        plan.verify()


# --- the caller's output buffers as room (plan/output_room.py) -------------------------------------------
def qdq_chain(n=64):
    """x -> QuantizeLinear -> q -> DequantizeLinear -> y: the DequantizeLinear writing y reads q element by
    element into wider floats."""
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"])]
    return nodes, [vi("x", [1, n])], [vi("y", None)], [("scale", np.float32(1 / 255)), ("zero", np.uint8(0))]


def test_intermediates_live_in_the_output_before_it_is_written():
    plan = plan_memory(chain_program([100, 100, 100, 300]))  # v2 is read by the step writing v3: stays
    assert [(a.value.name, a.link.kind, a.root.name, a.offset) for a in plan.aliases] == [("v0", "room", "v3", 0),
                                                                                         ("v1", "room", "v3", 448)]
    assert [b.value.name for b in plan.buffers] == ["v2"] and plan.sharing()["in_output_buffers"] == 2
    plan = plan_memory(chain_program([100, 100, 100, 300]), output_room=False)  # --outputs-overlap-inputs
    assert plan.aliases == [] and len(plan.buffers) == 3


def test_a_dequantized_output_reads_its_input_from_its_own_end():
    program, plan = planned(*qdq_chain(), output_room=True)
    assert kinds(plan) == {"q": ("tail", "y", 64 * 3)} and plan.arena_bytes == 0  # q's byte i under y's float i
    program, plan = planned(*qdq_chain(n=60), output_room=True)  # the tail at 180 bytes is not 16-byte aligned
    assert kinds(plan) == {} and plan.arena_bytes == 64


def test_verify_simulation_catches_a_tail_that_is_not_at_the_end():
    program, plan = planned(*qdq_chain(), output_room=True)
    q = next(a for a in plan.aliases if a.value.name == "q")
    q.offset -= 16  # y's float 60 would overwrite q's bytes 236-239 before they are read
    with pytest.raises(MlccError, match="overlaps"):
        plan.verify()


# --- random graphs: the simulation (plan.verify) accepts every plan ------------------------------------------
def random_graph(seed):
    rng = np.random.default_rng(seed)
    nodes, live, inits, count = [], [("x", 8)], [], 0
    for _ in range(30):
        count += 1
        name = f"t{count}"
        kind = rng.choice(["Relu", "Add", "Softmax", "Concat", "Slice", "Reshape"])
        a, a_len = live[rng.integers(len(live))]
        if kind == "Add":
            b, b_len = live[rng.integers(len(live))]
            if b_len != a_len:
                continue
            nodes.append(helper.make_node("Add", [a, b], [name]))
        elif kind == "Concat":
            b, b_len = live[rng.integers(len(live))]
            nodes.append(helper.make_node("Concat", [a, b], [name], axis=0))
            a_len += b_len
        elif kind == "Slice":
            lo = int(rng.integers(a_len))
            inits += [(f"{name}_s", np.array([lo], np.int64)), (f"{name}_e", np.array([a_len], np.int64))]
            nodes.append(helper.make_node("Slice", [a, f"{name}_s", f"{name}_e"], [name]))
            a_len -= lo
        elif kind == "Reshape":
            inits.append((f"{name}_shape", np.array([1, a_len], np.int64)))
            nodes.append(helper.make_node("Reshape", [a, f"{name}_shape"], [f"{name}_2d"]))
            inits.append((f"{name}_flat", np.array([a_len], np.int64)))
            nodes.append(helper.make_node("Reshape", [f"{name}_2d", f"{name}_flat"], [name]))
        else:
            nodes.append(helper.make_node(kind, [a], [name]))
        live.append((name, a_len))
        if len(live) > 5:
            live.pop(int(rng.integers(len(live) - 1)))
    outs = [vi(n, None) for n, _ in live[-2:]]
    return nodes, [vi("x", [8])], outs, inits


@pytest.mark.parametrize("seed", range(30))
def test_random_graphs_plan_soundly(seed):
    nodes, inputs, outputs, inits = random_graph(seed)
    program, plan = planned(nodes, inputs, outputs, inits)
    plan.verify()
    assert plan.lower_bound_bytes <= plan.arena_bytes <= plan.intermediates_bytes
    assert all(b.offset % ALIGN == 0 for b in plan.buffers)


def test_package_keeps_its_entry_points():
    assert planner.plan_memory is plan_memory and planner.MemoryPlan and planner.Buffer


# --- offsets and schedules ------------------------------------------------------------------------------------
class Box:
    def __init__(self, first, last, size):
        self.first, self.last, self.size, self.offset = first, last, size, -1


def test_sweep_reaches_the_bound_where_greedy_placements_miss_it():
    # (first, last, size in 64 B): every greedy order needs 9 x 64 B here, the live peak is 8 x 64 B
    boxes = [Box(first, last, 64 * s) for first, last, s in [(1, 2, 3), (0, 1, 2), (2, 4, 3), (1, 2, 1), (4, 6, 5), (6, 8, 1), (1, 1, 1)]]
    strategy = assign.assign(boxes, lower_bound=8 * 64, align=64)
    assert strategy.startswith("sweep") and max(b.offset + b.size for b in boxes) == 8 * 64
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if a.first <= b.last and b.first <= a.last:
                assert a.offset + a.size <= b.offset or b.offset + b.size <= a.offset


def test_a_better_schedule_is_chosen_for_branches_given_breadth_first():
    """Four branches, each a large tensor reduced to a small one; given all large ones first, the planner
    finishes each branch before starting the next."""
    nodes = [helper.make_node("Tile", ["x", f"r{i}"], [f"big{i}"]) for i in range(4)]
    nodes += [helper.make_node("ReduceMax", [f"big{i}"], [f"small{i}"], keepdims=0) for i in range(4)]
    nodes.append(helper.make_node("Sum", [f"small{i}" for i in range(4)], ["y"]))
    inits = [(f"r{i}", np.array([256 + i], np.int64)) for i in range(4)]
    program, plan = planned(nodes, [vi("x", [64])], [vi("y", None)], inits)
    assert plan.strategy.startswith("schedule depth first") or plan.strategy.startswith("schedule frees most")
    order = [s.node.op_type for s in program.steps]
    assert order[:2] == ["Tile", "ReduceMax"]  # one branch at a time
    assert plan.lower_bound_bytes < 2 * 64 * 256 * 4 + 4096  # one large tensor at a time (plus the smalls)


def test_the_given_order_is_kept_when_nothing_is_better():
    program, plan = planned([helper.make_node("Softmax", ["x"], ["a"]), helper.make_node("Softmax", ["a"], ["y"])],
                            [vi("x", [8])], [vi("y", None)])
    assert plan.strategy.startswith("schedule as given")
