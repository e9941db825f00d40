"""If, Loop and Scan, compiled away at build time (mlcc/control_flow.py), against onnxruntime."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import frontend, runners
from mlcc.errors import MlccError, NeedsConstantError, RunError, UnsupportedError
from tests.golden import check_model, rand

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def branch(name, op, out="r"):
    """A branch graph computing op(x) from the outer scope's x."""
    return helper.make_graph([helper.make_node(op, ["x"], [out])], name, [], [helper.make_tensor_value_info(out, F, [2, 3])])


def if_model(cond_is_input: bool, cond_value: bool = True):
    node = helper.make_node("If", ["c"], ["y"], then_branch=branch("then", "Relu"), else_branch=branch("else", "Neg"))
    inputs = [helper.make_tensor_value_info("x", F, [2, 3])]
    inits = []
    if cond_is_input:
        inputs.append(helper.make_tensor_value_info("c", B, []))
    else:
        inits.append(numpy_helper.from_array(np.array(cond_value), "c"))
    return model([node], inputs, [helper.make_tensor_value_info("y", F, [2, 3])], inits)


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_constant_condition_keeps_only_the_branch_taken(cond, target, tmp_path):
    m = if_model(False, cond)
    graph = frontend.import_model(m)
    assert [n.op_type for n in graph.nodes] == ["Relu" if cond else "Neg", "Identity"]
    check_model(m, {"x": rand(2, 3)}, target, tmp_path)


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_run_time_condition_selects_at_run_time(cond, target, tmp_path):
    check_model(if_model(True), {"x": rand(2, 3), "c": np.array(cond)}, target, tmp_path)


def test_if_branches_of_different_types_need_a_constant_condition():
    m = if_model(True)
    m.graph.node[0].attribute[1].g.node[0].op_type = "Shape"  # else: int64[2]
    del m.graph.node[0].attribute[1].g.output[:]
    m.graph.node[0].attribute[1].g.output.append(helper.make_tensor_value_info("r", I64, [2]))
    with pytest.raises(UnsupportedError, match="both branches to agree"):
        frontend.import_model(m)


def counting_loop(trip_input: bool):
    """Loop M times: acc += x * iter; scan output: acc after each iteration."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["x", "fi"], ["xi"]),
         helper.make_node("Add", ["acc_in", "xi"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["trace"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("acc_in", F, [3])],
        [helper.make_tensor_value_info("cond_out", B, []), helper.make_tensor_value_info("acc_out", F, [3]),
         helper.make_tensor_value_info("trace", F, [3])])
    node = helper.make_node("Loop", ["M", "", "acc0"], ["acc", "traces"], body=body)
    inputs = [helper.make_tensor_value_info("x", F, [3]), helper.make_tensor_value_info("acc0", F, [3])]
    inits = []
    if trip_input:
        inputs.append(helper.make_tensor_value_info("M", I64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(4, np.int64), "M"))
    return model([node], inputs, [helper.make_tensor_value_info("acc", F, [3]), helper.make_tensor_value_info("traces", F, [4, 3])], inits)


def test_loop_with_constant_trip_count_is_unrolled(target, tmp_path):
    check_model(counting_loop(False), {"x": rand(3), "acc0": rand(3, seed=1)}, target, tmp_path)


def test_loop_with_run_time_trip_count_names_the_input_to_freeze():
    with pytest.raises(NeedsConstantError, match="--freeze M="):
        frontend.import_model(counting_loop(True))
    graph = frontend.import_model(counting_loop(True), frontend.ShapeOverrides(frozen={"M": np.array(4)}))
    assert sum(n.op_type == "Add" for n in graph.nodes) == 4


def test_loop_ending_on_a_folded_condition(target, tmp_path):
    """No trip count: the body's condition is iter < 2, known at build time each iteration."""
    body = helper.make_graph(
        [helper.make_node("Less", ["i", "two"], ["cond_out"]),
         helper.make_node("Mul", ["v_in", "x"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("cond_in", B, []),
         helper.make_tensor_value_info("v_in", F, [3])],
        [helper.make_tensor_value_info("cond_out", B, []), helper.make_tensor_value_info("v_out", F, [3])],
        [numpy_helper.from_array(np.array(2, np.int64), "two")])
    node = helper.make_node("Loop", ["", "c0", "v0"], ["v"], body=body)
    m = model([node], [helper.make_tensor_value_info("x", F, [3]), helper.make_tensor_value_info("v0", F, [3])],
              [helper.make_tensor_value_info("v", F, [3])], [numpy_helper.from_array(np.array(True), "c0")])
    check_model(m, {"x": rand(3), "v0": rand(3, seed=2)}, target, tmp_path)


@pytest.mark.parametrize("reverse", [0, 1])
def test_scan_running_sum(reverse, target, tmp_path):
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["o"])],
        "body", [helper.make_tensor_value_info("s_in", F, [2]), helper.make_tensor_value_info("row", F, [2])],
        [helper.make_tensor_value_info("s_out", F, [2]), helper.make_tensor_value_info("o", F, [2])])
    node = helper.make_node("Scan", ["s0", "xs"], ["s", "os"], body=body, num_scan_inputs=1,
                            scan_input_directions=[reverse], scan_output_directions=[reverse], scan_input_axes=[1])
    m = model([node], [helper.make_tensor_value_info("s0", F, [2]), helper.make_tensor_value_info("xs", F, [2, 5])],
              [helper.make_tensor_value_info("s", F, [2]), helper.make_tensor_value_info("os", F, [5, 2])])
    check_model(m, {"s0": rand(2), "xs": rand(2, 5)}, target, tmp_path)


def rate_switch_model():
    """Silero VAD's shape: an If on a run-time input whose else branch types only for other input shapes
    (a MatMul that needs x's last dim to be 5); built for x = [2, 6], only then_branch compiles."""
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [helper.make_tensor_value_info("t", F, None)])
    other = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["e"])], "else", [], [helper.make_tensor_value_info("e", F, None)],
                              [numpy_helper.from_array(np.ones((5, 6), np.float32), "w")])
    nodes = [helper.make_node("Greater", ["rate", "limit"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other, name="choose")]
    return model(nodes, [helper.make_tensor_value_info("x", F, [2, "n"]), helper.make_tensor_value_info("rate", I64, [])],
                 [helper.make_tensor_value_info("y", F, [2, "n"])], [numpy_helper.from_array(np.array(8000, np.int64), "limit")])


def test_if_branch_untyped_for_the_shapes_returns_a_status(target, tmp_path, caplog):
    x = rand(2, 6)
    with caplog.at_level("WARNING", logger="mlcc"):
        check_model(rate_switch_model(), {"x": x, "rate": np.array(16000, np.int64)}, target, tmp_path, shapes={"x": (2, 6)})
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert "node 'choose' (If): its else_branch cannot be compiled" in warning and "--freeze rate=" in warning
    name, _, runner = target.partition("@")
    built = runners.load(tmp_path / f"out-{name}", runner=runner or None)
    with pytest.raises(RunError, match="returned status 3"):  # MLCC_ERROR_UNCOMPILED_BRANCH
        built.run({"x": x, "rate": np.array(8000, np.int64)})


def test_if_branch_untyped_is_gone_when_frozen(target, tmp_path, caplog):
    x = rand(2, 6)
    model_ = rate_switch_model()
    with caplog.at_level("WARNING", logger="mlcc"):
        report = check_model(model_, {"x": x}, target, tmp_path, shapes={"x": (2, 6)},
                             frozen={"rate": np.array(16000, np.int64)}, expected={"y": np.maximum(x, 0)})
    assert not caplog.records and report["ops"] == {"Relu": 1}, report["ops"]


def test_if_with_no_typable_branch_fails_the_build(tmp_path):
    m = rate_switch_model()  # then_branch made a MatMul that does not type for x = [2, 6] either
    then = [a for a in m.graph.node[1].attribute if a.name == "then_branch"][0].g
    then.node[0].CopyFrom(helper.make_node("MatMul", ["x", "w2"], ["t"]))
    then.initializer.append(numpy_helper.from_array(np.ones((4, 6), np.float32), "w2"))
    with pytest.raises(MlccError, match="MatMul"):
        frontend.import_model(m, frontend.ShapeOverrides(shapes={"x": (2, 6)}))
