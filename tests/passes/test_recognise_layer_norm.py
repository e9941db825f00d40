import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass

F = TensorProto.FLOAT
SHAPE = [2, 4, 8]
N = helper.make_node
GAMMA = rand(8, seed=1) + 1
BETA = rand(8, seed=2)


def mean(src, dst, axes=(-1,), opset=17):
    if opset >= 18:
        return N("ReduceMean", [src, "c_axes" if list(axes) == [-1] else "c_axes2"], [dst])
    return N("ReduceMean", [src], [dst], axes=list(axes))


def torch_spelling(opset=17, axes=(-1,)):
    return [mean("x", "m", axes, opset), N("Sub", ["x", "m"], ["d"]), N("Pow", ["d", "c_2"], ["sq"]),
            mean("sq", "v", axes, opset), N("Add", ["v", "c_eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]),
            N("Div", ["d", "sd"], ["n"]), N("Mul", ["n", "gamma2" if len(axes) == 2 else "gamma"], ["g"]),
            N("Add", ["g", "beta"], ["y"])]


SPELLINGS = {
    "torch": torch_spelling(),
    "torch_axes_input": torch_spelling(opset=18),
    "reciprocal": [mean("x", "m"), N("Sub", ["x", "m"], ["d"]), N("Mul", ["d", "d"], ["sq"]), mean("sq", "v"),
                   N("Add", ["c_eps", "v"], ["ve"]), N("Sqrt", ["ve"], ["sd"]), N("Reciprocal", ["sd"], ["r"]),
                   N("Mul", ["r", "d"], ["n"]), N("Mul", ["gamma", "n"], ["g"]), N("Add", ["beta", "g"], ["y"])],
    # tf2onnx of Keras LayerNormalization: the affine folded into x * inv + (beta - mean * inv)
    "keras": [mean("x", "m"), N("Sub", ["x", "m"], ["d"]), N("Mul", ["d", "d"], ["sq"]), mean("sq", "v"),
              N("Add", ["v", "c_eps"], ["ve"]), N("Sqrt", ["ve"], ["sd"]), N("Reciprocal", ["sd"], ["r"]),
              N("Mul", ["r", "gamma"], ["inv"]), N("Mul", ["x", "inv"], ["xi"]), N("Mul", ["m", "inv"], ["mi"]),
              N("Sub", ["beta", "mi"], ["b"]), N("Add", ["xi", "b"], ["y"])],
    "rsqrt_no_affine": [mean("x", "m"), N("Sub", ["x", "m"], ["d"]), N("Pow", ["d", "c_2"], ["sq"]), mean("sq", "v"),
                        N("Add", ["v", "c_eps"], ["ve"]), N("Pow", ["ve", "c_mhalf"], ["r"]), N("Mul", ["d", "r"], ["y"])],
    "two_axes": torch_spelling(axes=(-2, -1)),
    # the torch.export-based exporter drops a tiny epsilon (1e-12) added in float32
    "no_epsilon": [*torch_spelling()[:4], N("Sqrt", ["v"], ["sd"]), *torch_spelling()[6:]],
}
CONSTANTS = {"c_2": np.float32(2), "c_eps": np.float32(1e-5), "c_mhalf": np.float32(-0.5), "gamma": GAMMA,
             "beta": BETA, "gamma2": rand(4, 8, seed=3), "c_axes": np.array([-1], np.int64),
             "c_axes2": np.array([-2, -1], np.int64)}


def model(spellings, constants=CONSTANTS, extra_outputs=(), opset=17):
    nodes, inputs, outputs = [], [], []
    for name, spelling in spellings.items():
        rename = lambda v: v if v in constants else f"{v}_{name}"
        nodes += [N(n.op_type, [rename(v) for v in n.input], [rename(v) for v in n.output], name=f"{name}_{i}",
                    **{a.name: helper.get_attribute_value(a) for a in n.attribute})
                  for i, n in enumerate(spelling)]
        inputs.append(helper.make_tensor_value_info(f"x_{name}", F, SHAPE))
        outputs.append(helper.make_tensor_value_info(f"y_{name}", F, SHAPE))
    outputs += [helper.make_tensor_value_info(v, F, shape) for v, shape in extra_outputs]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in constants.items()]
    return make(nodes, inputs, outputs, inits, opset=opset)


@pytest.mark.parametrize("name", SPELLINGS)
def test_each_spelling_becomes_one_layer_norm(name):
    graph = imported(model({name: SPELLINGS[name]}, opset=18 if name == "torch_axes_input" else 17))
    assert run_pass(graph, "recognise_layer_norm") == {"layer_normalization": 1}
    (ln,) = [n for n in graph.nodes if n.op_type != "Constant"]
    assert ln.op_type == "LayerNormalization" and ln.inputs[0] is graph.inputs[0] and ln.outputs == graph.outputs
    epsilon = 0.0 if name == "no_epsilon" else pytest.approx(1e-5)
    assert ln.attrs == {"axis": 1 if name == "two_axes" else 2, "epsilon": epsilon, "stash_type": 1}
    if name == "two_axes":
        np.testing.assert_allclose(ln.inputs[1].data, CONSTANTS["gamma2"])
    elif name == "rsqrt_no_affine":
        np.testing.assert_array_equal(ln.inputs[1].data, np.ones(8, np.float32))
        assert len(ln.inputs) == 2
    else:
        np.testing.assert_allclose(ln.inputs[1].data, GAMMA, rtol=1e-6)
        np.testing.assert_allclose(ln.inputs[2].data, BETA, rtol=1e-6, atol=1e-7)


def test_a_middle_axis_is_left_alone_and_a_per_row_scale_stays_out():
    middle = [mean("x", "m", (1,))] + [N(n.op_type, list(n.input), list(n.output)) for n in SPELLINGS["rsqrt_no_affine"][1:]]
    middle[3] = mean("sq", "v", (1,))
    graph = imported(model({"middle": middle}))
    assert run_pass(graph, "recognise_layer_norm") == {"layer_normalization": 0}
    per_row = {**CONSTANTS, "gamma": rand(4, 1, seed=4)}  # varies along an axis that is not normalised
    graph = imported(model({"torch": SPELLINGS["torch"]}, per_row))
    assert run_pass(graph, "recognise_layer_norm") == {"layer_normalization": 1}
    assert [n.op_type for n in graph.nodes] == ["LayerNormalization", "Mul", "Add"]


def test_an_intermediate_read_elsewhere_keeps_the_pattern():
    graph = imported(model({"torch": SPELLINGS["torch"], "keras": SPELLINGS["keras"]},
                           extra_outputs=[("v_torch", [2, 4, 1]), ("inv_keras", [2, 4, 8])]))
    assert run_pass(graph, "recognise_layer_norm") == {"layer_normalization": 0}


def test_not_a_variance_is_left_alone():
    wrong = [N(n.op_type, list(n.input), list(n.output)) for n in SPELLINGS["reciprocal"]]
    wrong[2] = N("Mul", ["d", "x"], ["sq"])
    graph = imported(model({"wrong": wrong}))
    assert run_pass(graph, "recognise_layer_norm") == {"layer_normalization": 0}


def test_numerics_unchanged(target, tmp_path):
    feeds = {f"x_{name}": rand(*SHAPE, seed=i) * 2 + 1 for i, name in enumerate(SPELLINGS) if name != "torch_axes_input"}
    spellings = {k: v for k, v in SPELLINGS.items() if k != "torch_axes_input"}
    report = check_model(model(spellings), feeds, target, tmp_path, rtol=1e-4, atol=1e-5)
    assert report["ops"] == {"LayerNormalization": len(spellings)}
