"""choose_layout: convolutional regions run channels-last on targets whose conv_layout is NHWC, with
Transposes only at the region's boundary; numerics unchanged against onnxruntime (rtol 1e-4, atol 1e-4:
the same sums in another order)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT
TOL = dict(rtol=1e-4, atol=1e-4)


def _init(name, *shape, seed=0, scale=0.3):
    return numpy_helper.from_array((np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32), name)


def block():
    """conv+relu -> depthwise -> 1x1 with a per-channel Mul, max pool, a Concat with a strided 3x3 conv,
    global average pool, Flatten, Gemm."""
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "wd"], ["d"], group=8, pads=[1, 1, 1, 1], name="depthwise"),
             helper.make_node("Conv", ["d", "wp"], ["p"], name="pointwise"),
             helper.make_node("Mul", ["p", "scale"], ["ps"], name="scale"),
             helper.make_node("MaxPool", ["ps"], ["mp"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             helper.make_node("Conv", ["r1", "ws"], ["s"], strides=[2, 2], pads=[1, 1, 1, 1], name="strided"),
             helper.make_node("Concat", ["mp", "s"], ["cat"], axis=1, name="concat"),
             helper.make_node("GlobalAveragePool", ["cat"], ["g"], name="gap"),
             helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
             helper.make_node("Gemm", ["f", "wg"], ["y"], transB=1, name="fc")]
    inits = [_init("w1", 8, 3, 3, 3), _init("b1", 8, seed=1), _init("wd", 8, 1, 3, 3, seed=2),
             _init("wp", 12, 8, 1, 1, seed=3), _init("scale", 12, 1, 1, seed=4), _init("ws", 6, 8, 3, 3, seed=5),
             _init("wg", 5, 18, seed=6)]
    return make(nodes, [helper.make_tensor_value_info("x", F, [2, 3, 8, 8])],
                [helper.make_tensor_value_info("y", F, [2, 5])], inits, opset=17)


def test_region_runs_channels_last_with_transposes_only_at_its_edges():
    graph = imported(block())
    did = run_pass(graph, "choose_layout", target="x86_64")
    assert did == {"layout": "NHWC", "regions": 1, "nodes": 9, "transposes": 1, "reshapes": 1, "cancelled": 0,
                   "shuffles": 0, "left_at_boundary": 0, "written_transposed": 0}
    ir = text(graph)
    assert "%x_nhwc:float32[2,8,8,3] = Transpose(%x) perm=[0,2,3,1]" in ir
    assert ("= Conv(%x_nhwc, %w1, %b1) group=1 kernel_shape=[3,3] layout='NHWC'" in ir.replace("auto_pad='NOTSET' dilations=None ", "")
            or "layout='NHWC'" in ir)
    assert "%scale_nhwc:float32[12]" in ir  # [12, 1, 1] per channel -> [12]
    assert "axis=3" in ir
    # the pooled [2, 1, 1, 18] goes back to channels-first as a view
    assert "%g:float32[2,18,1,1] = Reshape(%g_nhwc" in ir
    assert [n.op_type for n in graph.nodes].count("Transpose") == 1


def test_nchw_targets_are_left_alone():
    graph = imported(block())
    before = text(graph)
    assert run_pass(graph, "choose_layout", target="wasm32-scalar") == {"layout": "NCHW", "regions": 0}
    assert text(graph) == before


def test_inverse_transposes_cancel_and_lone_elementwise_stays():
    """A TensorFlow-style NHWC input transposed to NCHW feeds the conv directly; an elementwise island with
    no convolution keeps its layout."""
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Conv", ["xt", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu"),
             helper.make_node("Sigmoid", ["z"], ["u"], name="lone")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [1, 6, 6, 4]), helper.make_tensor_value_info("z", F, [1, 2, 3, 3])],
                 [helper.make_tensor_value_info("y", F, [1, 5, 6, 6]), helper.make_tensor_value_info("u", F, [1, 2, 3, 3])],
                 [_init("w", 5, 4, 3, 3)])
    graph = imported(model)
    did = run_pass(graph, "choose_layout", target="x86_64")
    assert did["cancelled"] == 1 and did["nodes"] == 2 and did["transposes"] == 1
    ir = text(graph)
    assert "Conv(%x, %w)" in ir
    assert "%u:float32[1,2,3,3] = Sigmoid(%z)" in ir
    assert "%y:float32[1,5,6,6] = Transpose(%y_nhwc) perm=[0,3,1,2]" in ir


def shuffle_block(batch=1):
    """ShuffleNet's unit: grouped 1x1 conv, channel shuffle (Reshape, Transpose, Reshape), depthwise 3x3, and
    a shuffle whose result also leaves the graph."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["g"], group=2, name="grouped"),
             helper.make_node("Reshape", ["g", "split"], ["parts"], name="split"),
             helper.make_node("Transpose", ["parts"], ["swapped"], perm=[0, 2, 1, 3, 4], name="swap"),
             helper.make_node("Reshape", ["swapped", "merge"], ["shuffled"], name="merge"),
             helper.make_node("Conv", ["shuffled", "wd"], ["d"], group=12, pads=[1, 1, 1, 1], name="depthwise"),
             helper.make_node("Reshape", ["d", "split"], ["parts2"], name="split2"),
             helper.make_node("Transpose", ["parts2"], ["swapped2"], perm=[0, 2, 1, 3, 4], name="swap2"),
             helper.make_node("Reshape", ["swapped2", "merge"], ["y"], name="merge2")]
    inits = [_init("w1", 12, 4, 1, 1), _init("wd", 12, 1, 3, 3, seed=1),
             numpy_helper.from_array(np.array([batch, 3, 4, 5, 6], np.int64), "split"),
             numpy_helper.from_array(np.array([batch, 12, 5, 6], np.int64), "merge")]
    return make(nodes, [helper.make_tensor_value_info("x", F, [batch, 8, 5, 6])],
                [helper.make_tensor_value_info("y", F, [batch, 12, 5, 6])], inits)


def test_channel_shuffle_is_one_transpose_of_the_innermost_dims():
    graph = imported(shuffle_block())
    did = run_pass(graph, "choose_layout", target="x86_64")
    assert did["shuffles"] == 2 and did["transposes"] == 2  # the graph input's and output's
    ir = text(graph)
    assert "%parts_nhwc:float32[1,5,6,3,4] = Reshape(%g_nhwc" in ir
    assert "%swapped_nhwc:float32[1,5,6,4,3] = Transpose(%parts_nhwc) perm=[0,1,2,4,3]" in ir
    assert "%shuffled_nhwc:float32[1,5,6,12] = Reshape(%swapped_nhwc" in ir
    assert "%y:float32[1,12,5,6] = Transpose(%y_nhwc) perm=[0,3,1,2]" in ir


@pytest.mark.parametrize("channels,attrs", [
    (16, {"size": 5}),  # AlexNet / GoogLeNet: alpha 1e-4, beta 0.75
    (6, {"size": 3, "alpha": 0.02, "beta": 0.5, "bias": 2.0}),
    (3, {"size": 7, "alpha": 0.3, "beta": 1.0}),  # window wider than the channels
])
def test_lrn_joins_the_region(channels, attrs, target, tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("LRN", ["c"], ["n"], name="lrn", **attrs),
             helper.make_node("MaxPool", ["n"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [2, 4, 6, 7])],
                 [helper.make_tensor_value_info("y", F, [2, channels, 3, 3])], [_init("w", channels, 4, 3, 3, scale=1.0)])
    graph = imported(model)
    assert run_pass(graph, "choose_layout", target="x86_64")["nodes"] == 3 and "LRN(%c_nhwc) alpha" in text(graph)
    check_model(model, {"x": rand(2, 4, 6, 7)}, target, tmp_path, **TOL)


@pytest.mark.parametrize("opt", [2, 0])
def test_numerics_unchanged(target, tmp_path, opt):
    check_model(block(), {"x": rand(2, 3, 8, 8)}, target, tmp_path, opt_level=opt, **TOL)


def test_residual_and_activation_epilogues_channels_last(target, tmp_path):
    """fuse_epilogues first (bias, residual, Clip), then the layout: the residual is read as pixels x channels;
    an average pool with pads and a 1x1 strided conv take their channels-last forms."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Conv", ["a", "w2"], ["b"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Add", ["b", "bias"], ["bb"], name="bias"),
             helper.make_node("Add", ["bb", "a"], ["s"], name="residual"),
             helper.make_node("Clip", ["s", "lo", "hi"], ["r"], name="relu6"),
             helper.make_node("AveragePool", ["r"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="avg"),
             helper.make_node("Conv", ["ap", "w3"], ["y"], strides=[2, 2], name="down")]
    inits = [_init("w1", 16, 4, 3, 3), _init("w2", 16, 16, 3, 3, seed=1, scale=0.1), _init("bias", 16, 1, 1, seed=2),
             _init("w3", 7, 16, 1, 1, seed=3), numpy_helper.from_array(np.float32(0), "lo"),
             numpy_helper.from_array(np.float32(6), "hi")]
    model = make(nodes, [helper.make_tensor_value_info("x", F, [1, 4, 9, 9])],
                 [helper.make_tensor_value_info("y", F, [1, 7, 5, 5])], inits)
    check_model(model, {"x": rand(1, 4, 9, 9)}, target, tmp_path, **TOL)


def _quantized_block(tmp_path):
    """block() quantized by onnxruntime (QDQ, per-channel int8 weights, uint8 activations), then its islands
    made integer ops."""
    import onnx
    from onnxruntime import quantization as q

    src, dst = tmp_path / "block.onnx", tmp_path / "block.int8.onnx"
    onnx.save(block(), str(src))

    class Calibration(q.CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": rand(2, 3, 8, 8, seed=s)} for s in range(2)])

        def get_next(self):
            return next(self.batches, None)

    q.quantize_static(str(src), str(dst), Calibration(), quant_format=q.QuantFormat.QDQ, per_channel=True,
                      activation_type=q.QuantType.QUInt8, weight_type=q.QuantType.QInt8)
    model = onnx.load(str(dst))
    graph = imported(model)
    run_pass(graph, "lower_quantized_islands")
    run_pass(graph, "eliminate_dead_code")
    return model, graph


def test_integer_convolutions_run_channels_last_where_the_target_has_kernels_for_it(tmp_path):
    """x86_64 has qs8-packed's AVX2 GEMM: the integer convolutions, depthwise included, and the per-tensor Q / DQ
    around the float ops between them run channels-last with no Transpose inside; riscv64 (no qs8-packed form
    on RVV, a row one in qs8-gemm) keeps them channel-major. The input's QuantizeLinear stays out of the region
    (it reads the float input channel-major) and writes its 8-bit output channels-last itself: no Transpose
    at all, no pass over the input of its own. Numerics: tests/quantized."""
    model, graph = _quantized_block(tmp_path)
    did = run_pass(graph, "choose_layout", target="x86_64")
    convs = [n for n in graph.nodes if n.op_type == "QuantizedConv"]
    assert len(convs) == 4 and all(n.attrs.get("layout") == "NHWC" for n in convs)
    assert not [n for n in graph.nodes if n.op_type == "Transpose"]
    assert did["left_at_boundary"] == 1 and did["written_transposed"] == 1 and did["transposes"] == 0
    quantize = next(n for n in graph.nodes if n.op_type == "QuantizeLinear" and n.inputs[0].name == "x")
    assert quantize.attrs["output_perm"] == [0, 2, 3, 1] and quantize.outputs[0].dtype == np.uint8
    assert quantize.outputs[0].shape == (*quantize.inputs[0].shape[:1], *quantize.inputs[0].shape[2:], quantize.inputs[0].shape[1])
    assert all(n.attrs.get("layout") == "NHWC" for n in graph.nodes if quantize.outputs[0] in n.inputs)
    _, graph = _quantized_block(tmp_path)
    run_pass(graph, "choose_layout", target="riscv64")
    assert all(n.attrs.get("layout") != "NHWC" for n in graph.nodes if n.op_type == "QuantizedConv")
