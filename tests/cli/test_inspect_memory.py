"""`mlcc inspect`: the memory figures, the largest live set and the --plot timeline (an SVG a person reads)."""

import json
import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tests.cli.test_cli import assert_one_line_error, mlcc

SVG = "{http://www.w3.org/2000/svg}"


def branchy_model(path):
    """Two conv branches into a Concat, a Reshape and an elementwise tail: every kind of sharing."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1], name="conv_a"),
             helper.make_node("Relu", ["a"], ["ar"], name="relu_a"),
             helper.make_node("Conv", ["x", "wb"], ["b"], name="conv_b"),
             helper.make_node("Concat", ["ar", "b"], ["cat"], axis=1, name="cat"),
             helper.make_node("Reshape", ["cat", "shape"], ["flat"], name="flatten"),
             helper.make_node("Softmax", ["flat"], ["s"], name="softmax"),
             helper.make_node("Neg", ["s"], ["n"], name="neg"), helper.make_node("Abs", ["n"], ["y"], name="abs")]
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "wa"),
             numpy_helper.from_array(rng.standard_normal((2, 3, 1, 1)).astype(np.float32), "wb"),
             numpy_helper.from_array(np.array([1, -1], np.int64), "shape")]
    graph = helper.make_graph(nodes, "branchy", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 384])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_inspect_shows_bounds_sharing_and_the_largest_live_set(tmp_path):
    model = branchy_model(tmp_path / "branchy.onnx")
    proc = mlcc("inspect", model, "-O0")
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "lower bound" in text and "intermediates" in text and "arena / bound" in text
    assert "largest live set (step" in text and "sharing:" in text and "(no code)" in text
    info = json.loads(mlcc("inspect", model, "-O0", "--json").stdout)
    memory = info["memory"]
    assert memory["arena_lower_bound_bytes"] <= memory["arena_bytes"] < memory["intermediates_bytes"]
    assert memory["peak"]["tensors"] and all(t["bytes"] > 0 for t in memory["peak"]["tensors"])
    assert sum(t["bytes"] for t in memory["peak"]["tensors"]) == memory["arena_lower_bound_bytes"]
    sharing = memory["sharing"]
    assert sharing["views"] == 1 and sharing["steps_without_code"] == 2  # the Reshape and the Concat
    assert sharing["written_into_concat"] == 2 and sharing["in_place"] == 1  # Neg over the Softmax's output
    assert sharing["placed_in_concat"] == 1  # conv_a writes into the Concat's range, relu_a runs over it there
    shares = {n["name"]: n["shares"] for n in info["nodes"]}
    assert shares["flatten"] == ["view"] and shares["relu_a"] == ["concat"]


def test_inspect_plot_draws_the_timeline(tmp_path):
    model = branchy_model(tmp_path / "branchy.onnx")
    plot = tmp_path / "memory.svg"
    proc = mlcc("inspect", model, "-O0", "--plot", plot, "--outputs-overlap-inputs")  # every buffer in the arena
    assert proc.returncode == 0, proc.stderr
    root = ET.parse(plot).getroot()  # well-formed XML
    assert root.tag == f"{SVG}svg"
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert any(t.startswith("t_cat:") and "written into a Concat" in t for t in titles)  # the buffer and who shares it
    assert any("view of t_cat" in t for t in titles)
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "peak, step" in texts and "lower bound" in texts
    dashed = [r for r in root.iter(f"{SVG}rect") if r.get("stroke-dasharray")]
    assert len(dashed) >= 4  # shared tensors outlined inside their buffers (and the legend)


def test_inspect_plot_to_an_unwritable_place_is_one_line(tmp_path):
    model = branchy_model(tmp_path / "branchy.onnx")
    assert_one_line_error(mlcc("inspect", model, "--plot", tmp_path / "no" / "such" / "dir" / "m.svg"), "m.svg")
