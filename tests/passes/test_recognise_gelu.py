import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT
SHAPE = [2, 3, 8]


def const(name, value):
    return numpy_helper.from_array(np.array(value, np.float32), name)


N = helper.make_node
# Each spelling reads x and writes y; constants are named c_<value>.
SPELLINGS = {
    "torch_erf": [N("Div", ["x", "c_sqrt2"], ["t"]), N("Erf", ["t"], ["e"]), N("Add", ["e", "c_1"], ["u"]),
                  N("Mul", ["x", "u"], ["a"]), N("Mul", ["a", "c_half"], ["y"])],
    "bert_erf": [N("Mul", ["x", "c_half"], ["h"]), N("Mul", ["x", "c_rsqrt2"], ["t"]), N("Erf", ["t"], ["e"]),
                 N("Add", ["c_1", "e"], ["u"]), N("Mul", ["h", "u"], ["y"])],
    "half_on_sum_erf": [N("Mul", ["c_rsqrt2", "x"], ["t"]), N("Erf", ["t"], ["e"]), N("Add", ["e", "c_1"], ["u"]),
                        N("Div", ["u", "c_2"], ["v"]), N("Mul", ["v", "x"], ["y"])],
    "torch_tanh": [N("Mul", ["x", "x"], ["x2"]), N("Mul", ["x", "x2"], ["x3"]), N("Mul", ["c_k", "x3"], ["p"]),
                   N("Add", ["x", "p"], ["s"]), N("Mul", ["c_sqrt2pi", "s"], ["r"]), N("Tanh", ["r"], ["th"]),
                   N("Add", ["c_1", "th"], ["u"]), N("Mul", ["x", "u"], ["a"]), N("Mul", ["c_half", "a"], ["y"])],
    "keras_tanh": [N("Pow", ["x", "c_3"], ["x3"]), N("Mul", ["x3", "c_k"], ["p"]), N("Add", ["p", "x"], ["s"]),
                   N("Mul", ["s", "c_sqrt2pi"], ["r"]), N("Tanh", ["r"], ["th"]), N("Add", ["th", "c_1"], ["u"]),
                   N("Mul", ["c_half", "x"], ["h"]), N("Mul", ["h", "u"], ["y"])],
    "factored_tanh": [N("Mul", ["x", "x"], ["x2"]), N("Mul", ["x2", "c_k"], ["q"]), N("Add", ["q", "c_1"], ["w"]),
                      N("Mul", ["x", "w"], ["s"]), N("Mul", ["s", "c_sqrt2pi"], ["r"]), N("Tanh", ["r"], ["th"]),
                      N("Add", ["th", "c_1"], ["u"]), N("Mul", ["u", "x"], ["a"]), N("Mul", ["a", "c_half"], ["y"])],
}
CONSTANTS = {"c_sqrt2": 1.4142135, "c_rsqrt2": 0.70710677, "c_1": 1.0, "c_2": 2.0, "c_half": 0.5, "c_3": 3.0,
             "c_k": 0.044715, "c_sqrt2pi": 0.7978846}


def model(spellings, constants=CONSTANTS, extra_outputs=()):
    """The spellings side by side: x_<name> -> y_<name>, sharing the constants."""
    nodes, inputs, outputs = [], [], []
    for name in spellings:
        rename = lambda v: v if v.startswith("c_") else f"{v}_{name}"
        nodes += [N(n.op_type, [rename(v) for v in n.input], [rename(v) for v in n.output], name=f"{name}_{i}")
                  for i, n in enumerate(SPELLINGS[name])]
        inputs.append(helper.make_tensor_value_info(f"x_{name}", F, SHAPE))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", F, SHAPE))
    outputs += [helper.make_tensor_value_info(v, F, SHAPE) for v in extra_outputs]
    return make(nodes, inputs, outputs, [const(k, v) for k, v in constants.items()])


def ops(graph):
    return sorted(n.op_type for n in graph.nodes)


@pytest.mark.parametrize("name", SPELLINGS)
def test_each_spelling_becomes_one_gelu(name):
    graph = imported(model([name]))
    did = run_pass(graph, "recognise_gelu")
    approximate = "tanh" if "tanh" in name else "none"
    assert did == {"gelu_erf": int(approximate == "none"), "gelu_tanh": int(approximate == "tanh")}
    (gelu,) = graph.nodes
    assert (gelu.op_type, gelu.attrs, gelu.inputs, gelu.outputs) == (
        "Gelu", {"approximate": approximate}, graph.inputs, graph.outputs)


def test_a_wrong_constant_is_left_alone():
    graph = imported(model(["bert_erf", "torch_tanh"], {**CONSTANTS, "c_half": 0.6}))
    assert run_pass(graph, "recognise_gelu") == {"gelu_erf": 0, "gelu_tanh": 0}
    graph = imported(model(["torch_erf"], {**CONSTANTS, "c_sqrt2": 1.5}))
    assert run_pass(graph, "recognise_gelu")["gelu_erf"] == 0


def test_an_intermediate_read_elsewhere_keeps_the_pattern():
    graph = imported(model(["torch_erf", "torch_tanh"], extra_outputs=["e_torch_erf", "x3_torch_tanh"]))
    assert run_pass(graph, "recognise_gelu") == {"gelu_erf": 0, "gelu_tanh": 0}


def test_numerics_unchanged(target, tmp_path):
    feeds = {f"x_{name}": rand(*SHAPE, seed=i) * 3 for i, name in enumerate(SPELLINGS)}
    report = check_model(model(list(SPELLINGS)), feeds, target, tmp_path, rtol=1e-5, atol=1e-5)
    assert not {"Erf", "Tanh", "Pow"} & set(report["ops"])
