"""Channel slices: a channels-last Concat whose inputs' convolutions write their rows at its row pitch (no
copy), and the simulation (plan.verify) that checks such strided tensors byte by byte."""

import re

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend, lower, passes
from mlcc.errors import MlccError
from mlcc.plan import plan_memory
from mlcc.plan.check import _Memory
from mlcc.targets import resolve


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def planned(nodes, inputs, outputs, weights, target="wasm32"):
    graph = helper.make_graph(nodes, "t", inputs, outputs, [numpy_helper.from_array(a, n) for n, a in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    g = frontend.import_model(model, name="t")
    for name in passes.pipeline(2):
        passes.get(name)(g, resolve(target))
    program = lower.lower_graph(g, resolve(target))
    return program, plan_memory(program)


def fire(extra_reader=False):
    """squeezenet's fire module: squeeze 1x1, then expand 1x1 and 3x3 concatenated along channels."""
    rng = np.random.default_rng(0)
    weights = {"ws": rng.standard_normal((4, 8, 1, 1)), "we1": rng.standard_normal((5, 4, 1, 1)),
               "we3": rng.standard_normal((7, 4, 3, 3)), "wo": rng.standard_normal((3, 12, 1, 1))}
    nodes = [helper.make_node("Conv", ["x", "ws"], ["s"]), helper.make_node("Relu", ["s"], ["sr"]),
             helper.make_node("Conv", ["sr", "we1"], ["e1"]), helper.make_node("Relu", ["e1"], ["e1r"]),
             helper.make_node("Conv", ["sr", "we3"], ["e3"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["e3"], ["e3r"]),
             helper.make_node("Concat", ["e1r", "e3r"], ["cat"], axis=1), helper.make_node("Conv", ["cat", "wo"], ["y"])]
    outputs = [vi("y", None)]
    if extra_reader:  # e1r is also read on its own: it must stay a contiguous tensor
        weights["wx"] = rng.standard_normal((2, 5, 1, 1))
        nodes.append(helper.make_node("Conv", ["e1r", "wx"], ["y2"]))
        outputs.append(vi("y2", None))
    weights = {k: v.astype(np.float32) for k, v in weights.items()}
    return planned(nodes, [vi("x", [2, 8, 6, 7])], outputs, weights)


def strided(plan):
    return {a.value.name: (a.link.parent.name, a.link.offset, a.link.pitch) for a in plan.aliases if a.link.kind == "strided"}


def test_fire_module_writes_both_expands_into_the_concat():
    program, plan = fire()
    slices = strided(plan)
    assert len(slices) == 2 and len({parent for parent, _, _ in slices.values()}) == 1
    assert {o for _, o, _ in slices.values()} == {0, 5 * 4} and {p for _, _, p in slices.values()} == {12 * 4}
    assert sorted(program.steps[i].node.op_type for i in plan.elided_steps) == ["Concat"]
    assert plan.sharing()["written_into_concat_channels"] == 2
    expands = [s.code for s in program.steps if s.node.op_type == "Conv" and s.node.inputs[0].name == "sr_nhwc"]
    # both expands (4 input channels: f32-conv's direct kernel) write their rows at the Concat's 12 channels
    assert len(expands) == 2 and all(re.search(r"t_e[13]r_nhwc[^,;]*, 12u,", code) for code in expands)


def test_an_input_read_elsewhere_keeps_the_copy():
    program, plan = fire(extra_reader=True)
    assert strided(plan) == {} and not plan.elided_steps


def test_verify_catches_a_strided_slice_over_its_sibling():
    program, plan = fire()
    a, b = sorted((a for a in plan.aliases if a.link.kind == "strided"), key=lambda a: a.offset)
    b.offset = a.offset + 4  # b's rows now start inside a's rows: the Concat's consumer would read them mixed
    with pytest.raises(MlccError, match="hold|overlaps"):
        plan.verify()


def naive_holds(writes, size):
    owner = [None] * size
    for start, n, shift, tag in writes:
        for i in range(n):
            owner[start + i] = (tag, shift + i)
    return owner


@pytest.mark.parametrize("seed", range(4))
def test_memory_model_of_rows_matches_byte_by_byte(seed):
    rng = np.random.default_rng(seed)
    memory, writes, size = _Memory(), [], 200
    for tag in range(12):
        rows, row = int(rng.integers(1, 6)), int(rng.integers(1, 9))
        pitch, start = row + int(rng.integers(0, 6)), int(rng.integers(0, 60))
        ranges = [(start + r * pitch, row, r * row) for r in range(rows)]
        memory.write("arena", ranges, tag)
        writes += [(s, n, o, tag) for s, n, o in ranges]
        owner = naive_holds(writes, size)
        lo, n = int(rng.integers(0, 100)), int(rng.integers(1, 100))
        got = memory.read("arena", [(lo, n, 0)])
        flat = [None] * n
        for s0, s1, t, o in got:
            for i in range(s0, s1):
                flat[i] = None if t is None else (t, o + i - s0)
        assert flat == owner[lo:lo + n]
