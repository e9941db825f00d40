"""The IR text form: printing then parsing gives the same text."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend
from mlcc.ir import format_graph, parse_graph
from tests.passes.util import make

TEXT = """graph demo
  input %x:float32[2,3]
  const %w:float32[3] = [1.0, 2.0, 3.0]
  %a:float32[2,3] = Add(%x, %w)  # add
  %y:float32[2,3] = LeakyRelu(%a) alpha=0.1  # leaky
  output %y as 'result'
"""


def test_parse_then_format_round_trips():
    graph = parse_graph(TEXT)
    assert format_graph(graph) == TEXT
    assert graph.nodes[1].attrs == {"alpha": 0.1}
    np.testing.assert_array_equal(graph.nodes[0].inputs[1].data, [1, 2, 3])


def test_imported_graph_round_trips():
    model = make([helper.make_node("Transpose", ["x"], ["t"], name="tr", perm=[1, 0]),
                  helper.make_node("Mul", ["t", "k"], ["y"], name="mul")],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])],
                 [numpy_helper.from_array(np.float32(3).reshape(()), "k")])
    text = format_graph(frontend.import_model(model, name="g"))
    assert format_graph(parse_graph(text)) == text
