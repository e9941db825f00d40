"""fold_channel_permutations: a channel shuffle (Reshape, Transpose, Reshape) goes into the convolution
making it, or through a depthwise convolution into the weights or the direct kernel's channel table of the
convolution reading it; the copy stays where neither can take it. Numerics against onnxruntime (rtol 1e-4,
atol 1e-4: the same sums in another order)."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from mlcc.ops.conv import INPUT_CHANNEL_ORDER
from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT
TOL = dict(rtol=1e-4, atol=1e-4)
C, G, H, W = 16, 4, 6, 7


def _init(name, *shape, seed=0, scale=0.3):
    return numpy_helper.from_array((np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32), name)


def _shuffle(x, y, name):
    return [helper.make_node("Reshape", [x, "split"], [f"{name}_parts"], name=f"{name}_split"),
            helper.make_node("Transpose", [f"{name}_parts"], [f"{name}_swapped"], perm=[0, 2, 1, 3, 4], name=f"{name}_swap"),
            helper.make_node("Reshape", [f"{name}_swapped", "merge"], [y], name=f"{name}_merge")]


def shuffles():
    """Four channel shuffles of 4 groups of 4: ShuffleNet's unit (grouped 1x1 + ReLU, shuffle, depthwise,
    grouped 1x1 + residual + ReLU); one after an ungrouped 1x1 (into its weights); one between a depthwise and
    an ungrouped 1x1 (into the latter's weights); and one of the unit's activations straight to a graph output
    (copied: the channels-last shuffle's Transpose of the two innermost dims, then the layout's back)."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"], group=G, name="gconv1"),
             helper.make_node("Relu", ["a"], ["ar"], name="relu1"),
             *_shuffle("ar", "s", "unit"),
             helper.make_node("Conv", ["s", "wd", "bd"], ["d"], group=C, pads=[1, 1, 1, 1], name="depthwise"),
             helper.make_node("Conv", ["d", "w2"], ["e"], group=G, name="gconv2"),
             helper.make_node("Add", ["e", "x"], ["f"], name="residual"),
             helper.make_node("Relu", ["f"], ["y1"], name="relu2"),
             helper.make_node("Conv", ["x", "wp", "bp"], ["p"], name="pointwise"),
             *_shuffle("p", "q", "after_pointwise"),
             helper.make_node("Conv", ["q", "w3"], ["y2"], group=G, name="gconv3"),
             helper.make_node("Conv", ["y1", "w4"], ["g"], group=G, name="gconv4"),
             *_shuffle("g", "h", "before_depthwise"),
             helper.make_node("Conv", ["h", "wd2"], ["k"], group=C, strides=[2, 2], pads=[1, 1, 1, 1], name="depthwise2"),
             helper.make_node("Conv", ["k", "w5"], ["y3"], name="pointwise2"),
             *_shuffle("ar", "y4", "to_output")]
    inits = [_init("w1", C, C // G, 1, 1), _init("b1", C, seed=1), _init("wd", C, 1, 3, 3, seed=2),
             _init("bd", C, seed=3), _init("w2", C, C // G, 1, 1, seed=4), _init("wp", C, C, 1, 1, seed=5),
             _init("bp", C, seed=6), _init("w3", 8, C // G, 1, 1, seed=7), _init("w4", C, C // G, 1, 1, seed=8),
             _init("wd2", C, 1, 3, 3, seed=9), _init("w5", 12, C, 1, 1, seed=10),
             numpy_helper.from_array(np.array([2, G, C // G, H, W], np.int64), "split"),
             numpy_helper.from_array(np.array([2, C, H, W], np.int64), "merge")]
    outputs = [helper.make_tensor_value_info("y1", F, [2, C, H, W]), helper.make_tensor_value_info("y2", F, [2, 8, H, W]),
               helper.make_tensor_value_info("y3", F, [2, 12, 3, 4]), helper.make_tensor_value_info("y4", F, [2, C, H, W])]
    return make(nodes, [helper.make_tensor_value_info("x", F, [2, C, H, W])], outputs, inits)


def _optimised(target):
    graph = imported(shuffles())
    for name in ("fuse_epilogues", "choose_layout", "choose_winograd"):
        run_pass(graph, name, target=target)
    return graph, run_pass(graph, "fold_channel_permutations", target=target)


def test_shuffles_fold_into_the_convolutions_around_them():
    graph, did = _optimised("x86_64")
    assert did == {"into_producers": 1, "into_readers": 2, "forwarded": 2, "copied": 1}
    ir = text(graph)
    assert ir.count("Transpose(") == 1 + 5  # the shuffle to the output; the layout's at the graph's boundary
    assert "Transpose(%to_output_parts_nhwc) perm=[0,1,2,4,3]" in ir
    gconv2 = next(n for n in graph.nodes if n.name == "gconv2")
    # logical channel c of the shuffled tensor sits at (c % 4) * 4 + c // 4 of the depthwise output
    assert gconv2.attrs[INPUT_CHANNEL_ORDER] == [(c % G) * (C // G) + c // G for c in range(C)]
    assert gconv2.inputs[0].name == "d_nhwc_permuted"  # not compared by name in mlcc verify --layers
    graph.verify()


def test_without_the_direct_kernel_a_grouped_reader_keeps_the_copy():
    """wasm32 runs grouped convolutions on f32-gemm, which reads no channel table: the unit's shuffle stays."""
    graph, did = _optimised("wasm32")
    assert did == {"into_producers": 1, "into_readers": 1, "forwarded": 1, "copied": 2}
    graph.verify()


def test_numerics(target, tmp_path):
    report = check_model(shuffles(), {"x": rand(2, C, H, W)}, target, tmp_path, **TOL)
    did = next(p for p in report["passes"] if p["pass"] == "fold_channel_permutations")
    assert did["into_producers"] == 1 and did["copied"] <= 2
