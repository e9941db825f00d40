"""Golden tests of RNN, GRU and LSTM (f32-gemm products + f32-rnn cells) against onnxruntime, on every target.

Sizes sit off the gemm tiles (batch 5 > mr 4, gates 4 * 9 = 36 > nr 32). Weights are constants (packed at
build time) or graph inputs (packed at run time). Tolerance rtol=1e-4, atol=1e-5: a few steps of sums in a
different order, and onnxruntime's approximate sigmoid / tanh.
"""

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from mlcc.errors import UnsupportedError
from mlcc.frontend import import_model
from mlcc.lower import lower_graph
from mlcc.targets import resolve
from mlcc.verify import reference_outputs
from tests.golden import check_model, rand

TOL = dict(rtol=1e-4, atol=1e-5)
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def recurrent_model(op, *, seq=4, batch=3, inp=5, hidden=9, direction="forward", layout=0, bias=True, lens=None,
                    initial=False, peephole=False, outputs=("Y", "Y_h"), weights="const", attrs=None, opset=17):
    """A one-node model and its feeds. outputs: names, "" where omitted; weights: "const" (initializers) or
    "input" (graph inputs, fed). The operands' values do not depend on the layout."""
    dirs, g = (2 if direction == "bidirectional" else 1), GATES[op]
    x = rand(seq, batch, inp)
    state = (dirs, batch, hidden)
    operands = {"X": x, "W": rand(dirs, g * hidden, inp, seed=1) / 2, "R": rand(dirs, g * hidden, hidden, seed=2) / 2,
                "B": rand(dirs, 2 * g * hidden, seed=3) if bias else None,
                "sequence_lens": np.array(lens, np.int32) if lens is not None else None,
                "initial_h": rand(*state, seed=4) if initial else None,
                "initial_c": rand(*state, seed=5) if initial and op == "LSTM" else None,
                "P": rand(dirs, 3 * hidden, seed=6) if peephole else None}
    if layout:  # batch first: X [batch, seq, input], states [batch, dirs, hidden]
        operands.update({n: np.ascontiguousarray(operands[n].swapaxes(0, 1))
                         for n in ("X", "initial_h", "initial_c") if operands[n] is not None})
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"][:8 if op == "LSTM" else 6]
    names = [n if operands[n] is not None else "" for n in order]
    while names and not names[-1]:
        names.pop()
    fed = {"X"} | ({"W", "R", "B"} if weights == "input" else set())
    feeds = {n: operands[n] for n in names if n in fed}
    inits = [numpy_helper.from_array(operands[n], n) for n in names if n and n not in fed]
    node = helper.make_node(op, names, list(outputs), name="cell", direction=direction, hidden_size=hidden,
                            **({"layout": layout} if layout else {}), **(attrs or {}))
    graph = helper.make_graph(
        [node], "recurrent", [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
                              for n, a in feeds.items()],
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, None) for n in outputs if n], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model), feeds


def expected_outputs(op, model, feeds, **kwargs) -> dict:
    """onnxruntime's outputs; it refuses layout 1, so those come from the layout-0 model, transposed."""
    names = [o.name for o in model.graph.output]
    if not kwargs.get("layout"):
        return reference_outputs(model, feeds, names)[0]
    model0, feeds0 = recurrent_model(op, **{**kwargs, "layout": 0})
    expected = reference_outputs(model0, feeds0, names)[0]
    order = {4: (2, 0, 1, 3), 3: (1, 0, 2)}
    return {n: np.ascontiguousarray(a.transpose(order[a.ndim])) for n, a in expected.items()}


def check(op, target, tmp_path, **kwargs):
    model, feeds = recurrent_model(op, **kwargs)
    check_model(model, feeds, target, tmp_path, expected=expected_outputs(op, model, feeds, **kwargs), **TOL)


# --- LSTM ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_directions(direction, target, tmp_path):
    check("LSTM", target, tmp_path, batch=5, direction=direction, outputs=("Y", "Y_h", "Y_c"))


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_states_peepholes_lengths_run_time_weights(direction, target, tmp_path):
    # sequences of full, partial and zero length: zeros past the end, Y_h / Y_c from the last valid step
    check("LSTM", target, tmp_path, seq=5, direction=direction, lens=[5, 2, 0], initial=True, peephole=True,
          weights="input", outputs=("Y", "Y_h", "Y_c"))


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_batchwise_layout(direction, target, tmp_path):
    check("LSTM", target, tmp_path, layout=1, direction=direction, lens=[4, 3, 1], initial=True,
          outputs=("Y", "Y_h", "Y_c"), opset=14)


@pytest.mark.parametrize("outputs", [("Y",), ("", "Y_h"), ("", "", "Y_c"), ("Y", "", "Y_c")], ids=str)
def test_lstm_output_subsets(outputs, target, tmp_path):
    check("LSTM", target, tmp_path, direction="bidirectional", bias=False, outputs=outputs)


@pytest.mark.parametrize("attrs", [
    {"clip": 0.5},
    {"input_forget": 1},
    {"activations": ["HardSigmoid", "LeakyRelu", "Softsign"], "activation_alpha": [0.3, 0.2], "activation_beta": [0.4]},
    {"activations": ["Sigmoid", "Relu", "Elu", "Sigmoid", "ScaledTanh", "Tanh"], "activation_alpha": [0.8, 0.9],
     "activation_beta": [1.5], "clip": 2.0},
], ids=["clip", "input_forget", "activations", "activations-per-direction"])
def test_lstm_attributes(attrs, target, tmp_path):
    direction = "bidirectional" if len(attrs.get("activations", [])) == 6 else "forward"
    check("LSTM", target, tmp_path, direction=direction, lens=[4, 1, 3], peephole=True, attrs=attrs,
          outputs=("Y", "Y_h", "Y_c"))


# --- GRU -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("linear_before_reset", [0, 1])
@pytest.mark.parametrize("direction,weights", [("forward", "const"), ("reverse", "input"), ("bidirectional", "const")])
def test_gru(direction, weights, linear_before_reset, target, tmp_path):
    check("GRU", target, tmp_path, batch=5, direction=direction, weights=weights, initial=True, lens=[4, 2, 4, 1, 3],
          attrs={"linear_before_reset": linear_before_reset})


@pytest.mark.parametrize("linear_before_reset", [0, 1])
def test_gru_batchwise_layout_and_attributes(linear_before_reset, target, tmp_path):
    attrs = {"linear_before_reset": linear_before_reset, "clip": 1.5, "activations": ["HardSigmoid", "Softplus", "Sigmoid", "Softsign"]}
    check("GRU", target, tmp_path, layout=1, direction="bidirectional", lens=[3, 4, 2], initial=True, attrs=attrs,
          opset=14)


# --- RNN -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_rnn(direction, layout, target, tmp_path):
    check("RNN", target, tmp_path, direction=direction, layout=layout, initial=True, lens=[4, 3, 2],
          opset=14 if layout else 17)


@pytest.mark.parametrize("activations,alpha,beta", [
    (["Relu", "Sigmoid"], None, None),
    (["Affine", "LeakyRelu"], [0.7, 0.1], [0.2]),
    (["ThresholdedRelu", "ScaledTanh"], [0.3, 1.2], [0.6]),
    (["Elu", "HardSigmoid"], [0.5], None),  # HardSigmoid takes its default alpha 0.2, beta 0.5
    (["Softsign", "Softplus"], None, None),
], ids=lambda v: "-".join(v) if isinstance(v, list) and isinstance(v[0], str) else None)
def test_rnn_activations(activations, alpha, beta, target, tmp_path):
    attrs = {"activations": activations, "clip": 3.0}
    attrs.update({"activation_alpha": alpha} if alpha else {})
    attrs.update({"activation_beta": beta} if beta else {})
    check("RNN", target, tmp_path, direction="bidirectional", weights="input", attrs=attrs)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
def test_opset_7(op, target, tmp_path):
    outputs = ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")
    check(op, target, tmp_path, direction="bidirectional", initial=True, outputs=outputs, opset=7)


# --- constant folding and errors --------------------------------------------------------------------

@pytest.mark.parametrize("op,kwargs", [
    ("LSTM", dict(direction="bidirectional", lens=[4, 2, 0], initial=True, peephole=True, attrs={"clip": 0.8})),
    ("LSTM", dict(layout=1, lens=[1, 4, 3], attrs={"input_forget": 1}, opset=14)),
    ("GRU", dict(direction="reverse", lens=[3, 4, 1], initial=True, attrs={"linear_before_reset": 1})),
    ("GRU", dict(direction="bidirectional", attrs={"activations": ["Sigmoid", "Relu", "HardSigmoid", "Tanh"]})),
    ("RNN", dict(direction="bidirectional", layout=1, lens=[2, 4, 3], opset=14)),
])
def test_reference_folds_as_onnxruntime(op, kwargs):
    outputs = ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")
    model, feeds = recurrent_model(op, outputs=outputs, **kwargs)
    expected = expected_outputs(op, model, feeds, outputs=outputs, **kwargs)
    # X as a constant too: the frontend folds the node with the op's numpy reference
    graph_proto = model.graph
    graph_proto.initializer.append(numpy_helper.from_array(feeds["X"], "X"))
    del graph_proto.input[:]
    graph = import_model(model)
    for name, value in zip(outputs, graph.outputs):
        assert value.is_const
        np.testing.assert_allclose(value.data, expected[name], **TOL)


@pytest.mark.parametrize("op,attrs,message", [
    ("RNN", {"activations": ["Gelu"]}, "activation 'Gelu'"),
    ("LSTM", {"activations": ["Sigmoid", "Tanh"]}, "2 activations do not fit"),
    ("GRU", {"clip": -1.0}, "clip -1.0 is not positive"),
])
def test_unsupported_attributes_are_clear_errors(op, attrs, message):
    model, _ = recurrent_model(op, weights="input", attrs=attrs)
    with pytest.raises(UnsupportedError, match=message):
        lower_graph(import_model(model), resolve("host"))


def test_double_is_refused():
    model, _ = recurrent_model("LSTM", weights="input")
    for info in [*model.graph.input, *model.graph.output]:  # outputs too: a declared float output would be refused first
        info.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    with pytest.raises(UnsupportedError, match="float32 only"):
        lower_graph(import_model(model), resolve("host"))
