import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc.ops import lookup
from mlcc.ops._views import reshape_strides
from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass

F, B = TensorProto.FLOAT, TensorProto.BOOL
N = helper.make_node


def c(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype), name)


def bert_heads(prefix="", batch=2, seq=5, heads=2, dim=4, mask="add", scale_on="scores", extra_output=None):
    """A BERT-style self-attention on [batch, seq, heads*dim] q, k, v: heads split by Reshape+Transpose,
    K^T by a Transpose, merged back by Transpose+Reshape."""
    p = lambda n: f"{prefix}{n}"
    hidden = heads * dim
    nodes = [N("Reshape", [p("q"), "c_split"], [p("q4")]), N("Transpose", [p("q4")], [p("qt")], perm=[0, 2, 1, 3]),
             N("Reshape", [p("k"), "c_split"], [p("k4")]), N("Transpose", [p("k4")], [p("kt")], perm=[0, 2, 3, 1]),
             N("Reshape", [p("v"), "c_split"], [p("v4")]), N("Transpose", [p("v4")], [p("vt")], perm=[0, 2, 1, 3])]
    if scale_on == "scores":
        nodes += [N("MatMul", [p("qt"), p("kt")], [p("s0")]), N("Div", [p("s0"), "c_sqrtd"], [p("s1")])]
    else:  # on Q and K^T separately, as PyTorch's scaled_dot_product_attention exports
        nodes += [N("Mul", [p("qt"), "c_qrtd"], [p("qs")]), N("Mul", [p("kt"), "c_qrtd"], [p("ks")]),
                  N("MatMul", [p("qs"), p("ks")], [p("s1")])]
    inputs = [helper.make_tensor_value_info(p(n), F, [batch, seq, hidden]) for n in "qkv"]
    if mask == "add":
        nodes.append(N("Add", [p("s1"), p("mask")], [p("s2")]))
        inputs.append(helper.make_tensor_value_info(p("mask"), F, [batch, 1, 1, seq]))
    elif mask == "keep":
        nodes.append(N("Where", [p("keep"), p("s1"), "c_big_negative"], [p("s2")]))
        inputs.append(helper.make_tensor_value_info(p("keep"), B, [batch, 1, seq, seq]))
    nodes += [N("Softmax", [p("s2" if mask != "none" else "s1")], [p("pr")], axis=-1), N("MatMul", [p("pr"), p("vt")], [p("o4")]),
              N("Transpose", [p("o4")], [p("o3")], perm=[0, 2, 1, 3]), N("Reshape", [p("o3"), "c_merge"], [p("y")])]
    outputs = [helper.make_tensor_value_info(p("y"), F, [batch, seq, hidden])]
    if extra_output:
        outputs.append(helper.make_tensor_value_info(p(extra_output[0]), F, extra_output[1]))
    for i, n in enumerate(nodes):
        n.name = f"{prefix}n{i}"
    return nodes, inputs, outputs


def constants(batch=2, seq=5, heads=2, dim=4):
    return [c("c_split", [batch, seq, heads, dim], np.int64), c("c_merge", [batch, seq, heads * dim], np.int64),
            c("c_sqrtd", np.sqrt(dim)), c("c_qrtd", dim ** -0.25), c("c_big_negative", -1e9)]


def model(*parts, opset=17):
    nodes, inputs, outputs = [], [], []
    for part in parts:
        nodes += part[0]
        inputs += part[1]
        outputs += part[2]
    return make(nodes, inputs, outputs, constants(), opset=opset)


def fused(graph):
    nodes = [n for n in graph.nodes if n.op_type not in ("Constant", "Identity")]
    assert all(n.op_type == "FusedAttention" for n in nodes), [n.op_type for n in nodes]
    return nodes


def test_bert_self_attention_becomes_one_node_reading_the_projections_in_place():
    graph = imported(model(bert_heads()))
    assert run_pass(graph, "recognise_attention") == {"attention": 1, "absorbed_views": 8}
    (node,) = fused(graph)
    assert node.domain == "mlcc" and node.inputs == graph.inputs and node.outputs == graph.outputs
    assert node.attrs["dims"] == [2, 2, 5, 5, 4, 4] and node.attrs["scale"] == pytest.approx(0.5)
    # [batch, seq, heads*dim] read as [batch, head, row, col]: head h at column h*dim
    assert node.attrs["q"] == node.attrs["k"] == node.attrs["v"] == node.attrs["y"] == [0, 40, 4, 8, 1]
    assert node.attrs["add_mask"] == [0, 5, 0, 0, 1]


def test_scales_on_q_and_k_multiply_and_a_keep_mask_fills():
    graph = imported(model(bert_heads(mask="keep", scale_on="operands")))
    assert run_pass(graph, "recognise_attention")["attention"] == 1
    (node,) = fused(graph)
    assert node.attrs["scale"] == pytest.approx(0.5) and node.attrs["fill"] == pytest.approx(-1e9)
    assert node.attrs["keep_when"] == 1 and node.attrs["keep_mask"] == [0, 25, 0, 5, 1]


def test_a_key_transposed_by_simplify_algebra_is_read_in_place():
    nodes, inputs, outputs, consts = shared_kv("", q_len=6, kv_len=9)
    graph = imported(make(nodes, inputs, outputs, consts, opset=17))
    run_pass(graph, "simplify_algebra")
    assert [n.attrs.get("_trans_b") for n in graph.nodes if n.op_type == "MatMul"] == [1, None]
    assert run_pass(graph, "recognise_attention") == {"attention": 1, "absorbed_views": 0}
    (node,) = fused(graph)
    assert node.attrs["k"] == [0, 0, 0, 8, 1] and node.inputs[1] is graph.inputs[1]


def test_scores_read_elsewhere_keep_the_pattern():
    graph = imported(model(bert_heads(extra_output=("s2", [2, 2, 5, 5]))))
    assert run_pass(graph, "recognise_attention")["attention"] == 0


def test_a_softmax_over_another_axis_is_not_attention():
    nodes = [N("MatMul", ["q", "kt"], ["s"]), N("Softmax", ["s"], ["p"], axis=1), N("MatMul", ["p", "v"], ["y"])]
    inputs = [helper.make_tensor_value_info(n, F, [3, 4, 4]) for n in ("q", "kt", "v")]
    graph = imported(make(nodes, inputs, [helper.make_tensor_value_info("y", F, [3, 4, 4])], opset=13))
    assert run_pass(graph, "recognise_attention")["attention"] == 0


def shared_kv(prefix, batch=1, heads=4, q_len=70, kv_len=1000, dim=8):
    """Keys and values of one head broadcast over 4 query heads (multi-query), a Where that drops where
    the mask is true, and enough keys that the queries go in several blocks of scores."""
    p = lambda n: f"{prefix}{n}"
    nodes = [N("Transpose", [p("k")], [p("kt")], perm=[0, 1, 3, 2]), N("MatMul", [p("q"), p("kt")], [p("s0")]),
             N("Mul", [p("s0"), p("c_scale")], [p("s1")]), N("Where", [p("drop"), p("c_ninf"), p("s1")], [p("s2")]),
             N("Softmax", [p("s2")], [p("pr")], axis=-1), N("MatMul", [p("pr"), p("v")], [p("y")])]
    inputs = [helper.make_tensor_value_info(p("q"), F, [batch, heads, q_len, dim]),
              helper.make_tensor_value_info(p("k"), F, [batch, 1, kv_len, dim]),
              helper.make_tensor_value_info(p("v"), F, [batch, 1, kv_len, dim]),
              helper.make_tensor_value_info(p("drop"), B, [q_len, kv_len])]
    consts = [c(p("c_scale"), 0.3), c(p("c_ninf"), -np.inf)]
    return nodes, inputs, [helper.make_tensor_value_info(p("y"), F, [batch, heads, q_len, dim])], consts


def test_broadcast_keys_and_values_are_packed_once_per_batch():
    nodes, inputs, outputs, consts = shared_kv("")
    graph = imported(make(nodes, inputs, outputs, consts, opset=17))
    assert run_pass(graph, "recognise_attention") == {"attention": 1, "absorbed_views": 1}
    (node,) = fused(graph)
    assert node.attrs["kv_group"] == 4 and node.attrs["keep_when"] == 0 and node.attrs["keep_mask"] == [0, 0, 0, 1000, 1]


def test_the_reference_matches_the_graph_it_replaces():
    nodes, inputs, outputs, consts = shared_kv("", q_len=6, kv_len=9)
    onnx_model = make(nodes, inputs, outputs, consts, opset=17)
    graph = imported(onnx_model)
    run_pass(graph, "recognise_attention")
    (node,) = fused(graph)
    rng = np.random.default_rng(0)
    feeds = [rng.standard_normal(v.shape).astype(np.float32) for v in graph.inputs[:3]]
    feeds.append(rng.random((6, 9)) < 0.3)
    from onnx.reference import ReferenceEvaluator
    want = ReferenceEvaluator(onnx_model).run(None, dict(zip(["q", "k", "v", "drop"], feeds)))[0]
    got = lookup("FusedAttention", "mlcc").reference(node, [*feeds[:3], None, feeds[3]])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape,strides,new", [((4, 6), (6, 1), (2, 2, 3, 2)), ((2, 3, 4), (1, 8, 2), (2, 12)),
                                               ((2, 3, 4), (12, 1, 3), (6, 4)), ((5, 1, 4), (4, 4, 1), (20,))])
def test_reshape_strides_agree_with_numpy(shape, strides, new):
    base = np.arange(200)
    view = np.lib.stride_tricks.as_strided(base, shape, [s * base.itemsize for s in strides])
    got = reshape_strides(shape, strides, new)
    try:
        want = view.reshape(new)
        assert not np.shares_memory(want, view) or got is not None
    except ValueError:
        return
    if got is None:
        assert not np.shares_memory(view.reshape(new), base)
    else:
        np.testing.assert_array_equal(np.lib.stride_tricks.as_strided(base, new, [s * base.itemsize for s in got]), want)


def test_numerics_unchanged(target, tmp_path):
    parts = [bert_heads("a_"), bert_heads("b_", mask="keep", scale_on="operands"), bert_heads("c_", mask="none")]
    nodes, inputs, outputs, consts = shared_kv("d_")
    onnx_model = make([n for part in parts for n in part[0]] + nodes, [i for part in parts for i in part[1]] + inputs,
                      [o for part in parts for o in part[2]] + outputs, constants() + consts, opset=17)
    feeds = {i.name: (rand(*[d.dim_value for d in i.type.tensor_type.shape.dim], seed=n) * 2).astype(np.float32)
             for n, i in enumerate(onnx_model.graph.input) if i.type.tensor_type.elem_type == F}
    rng = np.random.default_rng(1)
    feeds["a_mask"] = np.where(rng.random((2, 1, 1, 5)) < 0.3, -1e4, 0).astype(np.float32)
    feeds["b_keep"] = rng.random((2, 1, 5, 5)) < 0.7
    feeds["b_keep"][..., 0] = True  # no row masked throughout
    feeds["d_drop"] = rng.random((70, 1000)) < 0.5
    feeds["d_drop"][:, 0] = False
    report = check_model(onnx_model, feeds, target, tmp_path, rtol=1e-4, atol=1e-5)
    assert report["ops"] == {"FusedAttention": 4}


def packed_qkv_with_a_reshaped_key(batch=2, seq=4, heads=2, dim=4):
    """q, k and v sliced from one packed [3, batch, heads, seq, dim] tensor (timm's MobileViT through the dynamo
    exporter); K^T made by Reshape/Transpose/Reshape over its slice, which cannot be read through strides."""
    nodes = [N("Reshape", ["x", "c_pack"], ["x5"]), N("Transpose", ["x5"], ["packed"], perm=[2, 0, 3, 1, 4]),
             N("Slice", ["packed", "c_0", "c_1", "c_0"], ["q5"]), N("Squeeze", ["q5", "c_0"], ["q"]),
             N("Slice", ["packed", "c_1", "c_2", "c_0"], ["k5"]), N("Reshape", ["k5", "c_bh"], ["k3"]),
             N("Transpose", ["k3"], ["kt3"], perm=[0, 2, 1]), N("Reshape", ["kt3", "c_kt"], ["kt"]),
             N("Slice", ["packed", "c_2", "c_3", "c_0"], ["v5"]), N("Squeeze", ["v5", "c_0"], ["v"]),
             N("Mul", ["q", "c_qrtd"], ["qs"]), N("Mul", ["kt", "c_qrtd"], ["ks"]), N("MatMul", ["qs", "ks"], ["s"]),
             N("Softmax", ["s"], ["p"], axis=-1), N("MatMul", ["p", "v"], ["y"])]
    consts = [c("c_pack", [batch, seq, 3, heads, dim], np.int64), c("c_bh", [batch * heads, seq, dim], np.int64),
              c("c_kt", [batch, heads, dim, seq], np.int64), c("c_qrtd", dim ** -0.25),
              *(c(f"c_{i}", [i], np.int64) for i in range(4))]
    return make(nodes, [helper.make_tensor_value_info("x", F, [batch, seq, 3 * heads * dim])],
                [helper.make_tensor_value_info("y", F, [batch, heads, seq, dim])], consts, opset=17)


def test_an_operand_cut_back_to_its_own_view_keeps_the_packed_tensor_the_others_share(target, tmp_path):
    graph = imported(packed_qkv_with_a_reshaped_key())
    run_pass(graph, "recognise_attention")
    graph.verify()  # K's Slice still reads the packed Transpose: it must not be absorbed into Q's or V's view
    onnx_model = packed_qkv_with_a_reshaped_key()
    report = check_model(onnx_model, {"x": rand(2, 4, 24, seed=3).astype(np.float32)}, target, tmp_path)
    assert report["ops"]["FusedAttention"] == 1
