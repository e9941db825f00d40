import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT
SHAPE = [2, 5, 6]
N = helper.make_node


def reduce(op, src, dst, axis, opset):
    since = 13 if op == "ReduceSum" else 18
    if opset >= since:
        return N(op, [src, f"c_axis{axis}"], [dst])
    return N(op, [src], [dst], axes=[axis])


def spelling(kind, axis, opset):
    stable = kind != "plain"
    nodes = [reduce("ReduceMax", "x", "mx", axis, opset), N("Sub", ["x", "mx"], ["s"])] if stable else []
    nodes += [N("Exp", ["s" if stable else "x"], ["e"]), reduce("ReduceSum", "e", "t", axis, opset)]
    if kind == "reciprocal":
        nodes += [N("Reciprocal", ["t"], ["r"]), N("Mul", ["r", "e"], ["y"])]
    else:
        nodes.append(N("Div", ["e", "t"], ["y"]))
    return nodes


CASES = {"stable": ("stable", -1, 13), "plain": ("plain", -1, 11), "reciprocal": ("reciprocal", 1, 18)}


def model(cases, extra_outputs=(), opset=13):
    nodes, inputs, outputs = [], [], []
    for name, (kind, axis, _) in cases.items():
        rename = lambda v: v if v.startswith("c_") else f"{v}_{name}"
        nodes += [N(n.op_type, [rename(v) for v in n.input], [rename(v) for v in n.output], name=f"{name}_{i}",
                    **{a.name: helper.get_attribute_value(a) for a in n.attribute})
                  for i, n in enumerate(spelling(kind, axis, opset))]
        inputs.append(helper.make_tensor_value_info(f"x_{name}", F, SHAPE))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", F, SHAPE))
    outputs += [helper.make_tensor_value_info(v, F, shape) for v, shape in extra_outputs]
    inits = [numpy_helper.from_array(np.array([a], np.int64), f"c_axis{a}") for a in (-1, 1)]
    return make(nodes, inputs, outputs, inits, opset=opset)


@pytest.mark.parametrize("name", CASES)
def test_each_spelling_becomes_one_softmax(name):
    graph = imported(model({name: CASES[name]}, opset=CASES[name][2]))
    assert run_pass(graph, "recognise_softmax") == {"softmax": 1}
    (softmax,) = graph.nodes
    assert softmax.op_type == "Softmax" and softmax.attrs == {"axis": CASES[name][1] % 3}
    assert softmax.inputs == graph.inputs and softmax.outputs == graph.outputs
    assert softmax.opset >= 13  # normalises along one axis, whatever the model's opset


def test_two_axes_or_a_read_intermediate_are_left_alone():
    two = [N("Exp", ["x"], ["e"]), N("ReduceSum", ["e", "c_axes"], ["t"]), N("Div", ["e", "t"], ["y"])]
    graph = imported(make(two, [helper.make_tensor_value_info("x", F, SHAPE)], [helper.make_tensor_value_info("y", F, SHAPE)],
                          [numpy_helper.from_array(np.array([1, 2], np.int64), "c_axes")], opset=13))
    assert run_pass(graph, "recognise_softmax") == {"softmax": 0}
    graph = imported(model({"stable": CASES["stable"]}, extra_outputs=[("e_stable", SHAPE)]))
    assert run_pass(graph, "recognise_softmax") == {"softmax": 0}


def test_numerics_unchanged(target, tmp_path):
    cases = {k: v for k, v in CASES.items() if v[2] == 13}
    cases["plain_axis1"] = ("plain", 1, 13)
    feeds = {f"x_{name}": rand(*SHAPE, seed=i) * 4 for i, name in enumerate(cases)}
    report = check_model(model(cases), feeds, target, tmp_path, rtol=1e-5, atol=1e-6)
    assert report["ops"] == {"Softmax": 2}
