"""lower_quantized_islands: DQ -> Conv/MatMul/Gemm [-> ReLU/Clip] -> Q islands become integer ops with
folded bias, fixed-point requantization and the activation as clamp bounds; others stay in float. The
numbers of whole quantized models are tested in tests/quantized."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc.ops._qs8 import fixed_point, narrow_sum, split_sum
from mlcc.ops.requantize import narrow_affine
from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text


def qdq_conv(activation=None, weight_dtype=np.int8, weight_zero=0):
    """x -> Q -> DQ -> Conv(DQ(int8 w), DQ(int32 bias)) [-> activation] -> Q -> DQ -> y."""
    rng = np.random.default_rng(0)
    w = rng.integers(-100, 100, (4, 3, 3, 3)).astype(weight_dtype)
    w_scale = np.linspace(0.01, 0.02, 4).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for n, a in {
        "xs": np.float32(0.05), "xz": np.uint8(120), "w": w, "ws": w_scale, "wz": np.full(4, weight_zero, weight_dtype),
        "b": np.arange(4, dtype=np.int32) * 30 - 40, "bs": (w_scale * np.float32(0.05)).astype(np.float32),
        "ys": np.float32(0.1), "yz": np.uint8(100), "lo": np.float32(-1.0), "hi": np.float32(2.0)}.items()]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs"], ["bf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "bf"], ["c"], pads=[1, 1, 1, 1], name="conv")]
    last = "c"
    if activation == "relu":
        nodes.append(helper.make_node("Relu", ["c"], ["a"]))
        last = "a"
    elif activation == "clip":
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["a"]))
        last = "a"
    nodes += [helper.make_node("QuantizeLinear", [last, "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    return make(nodes, [io("x", [1, 3, 6, 6])], [io("y", [1, 4, 6, 6])], inits)


def conv_node(graph):
    return next(n for n in graph.nodes if n.op_type == "QuantizedConv")


@pytest.mark.parametrize("activation,y_min,y_max", [(None, 0, 255), ("relu", 100, 255), ("clip", 90, 120)])
def test_conv_island_becomes_quantized_conv(activation, y_min, y_max):
    graph = imported(qdq_conv(activation))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {"QuantizedConv": 1}
    assert "Conv(" not in text(graph).replace("QuantizedConv(", "") and "Relu" not in text(graph)
    node = conv_node(graph)
    # activation as clamp bounds on the quantized output: Q(0) = 100, Q(-1) = 90, Q(2) = 120
    assert (node.attrs["y_zero"], node.attrs["y_min"], node.attrs["y_max"]) == (100, y_min, y_max)
    assert node.inputs[0].dtype == np.uint8 and node.attrs["a_flip"] == 128
    w = node.inputs[1].data[:, :27].astype(np.int64)
    # bias + (128 - x_zero) * sum(w): the kernel reads uint8 x as x - 128
    np.testing.assert_array_equal(node.inputs[2].data, np.arange(4) * 30 - 40 + (128 - 120) * w.sum(axis=1))
    mult, shift = node.inputs[3].data, node.inputs[4].data
    real = np.float64(np.float32(0.05)) * np.linspace(0.01, 0.02, 4).astype(np.float32).astype(np.float64) / np.float64(np.float32(0.1))
    np.testing.assert_allclose(mult * 2.0 ** -shift.astype(np.float64), real, rtol=2 ** -30)


def test_weights_with_a_zero_point_stay_in_float():
    graph = imported(qdq_conv(weight_dtype=np.uint8, weight_zero=128))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["integer_ops"] == 0
    assert report["left_in_float"] == [{"node": "conv", "op": "Conv", "why": "weights not symmetric int8"}]


@pytest.mark.parametrize("activation", [None, "clip"])
def test_numbers_unchanged(activation, target, tmp_path):
    model = qdq_conv(activation)
    x = rand(1, 3, 6, 6, seed=3)
    check_model(model, {"x": x}, target, tmp_path, rtol=0, atol=0.1 + 1e-6)  # one step of y


def test_fixed_point():
    mult, shift = fixed_point(np.array([0.5, 0.75, 1e-3, 3.0, 1e-20]))
    assert list(mult[:4]) == [2**30, 3 * 2**29, round(1e-3 * 2.0 ** 40), 3 * 2**29]
    assert list(shift[:4]) == [31, 31, 40, 29] and (mult[4], shift[4]) == (0, 62)
    assert fixed_point(np.array([2.0 ** 31])) is None


@pytest.mark.parametrize("widest", [21, 15])
def test_split_sum_is_the_int64_sum(widest):
    """ops/_qs8.split_sum's 32-bit form (as the C computes it) against the int64 requantization on every operand
    in -255..255 (pairs of them for two), multipliers of either sign and size, offsets, shifts 1..40: equal
    wherever the clamp to an 8-bit range could tell them apart; split at bit 21 or (the per-channel Requantize's
    16-bit tables) at most 15."""
    rng = np.random.default_rng(0)
    codes = np.arange(-255, 256, dtype=np.int64)
    pair = [v.ravel() for v in np.meshgrid(codes, codes)]
    planned = 0
    for trial in range(90):
        count, shift = 1 + trial % 3 // 2, int(rng.integers(1, 41))
        multipliers = [int(rng.integers(-2**31 + 1, 2**31)) >> int(rng.integers(0, 20)) for _ in range(count)]
        offset = int(rng.integers(-2**min(59, shift + 12), 2**min(59, shift + 12))) if trial % 3 else 0
        plan = split_sum(multipliers, offset, shift, widest=widest)
        if plan is None:  # multipliers so large that every nonzero operand saturates; or, split low, a long rest
            assert shift < 11 or (widest < 21 and shift - widest >= 20), shift
            continue
        assert plan["split"] <= widest
        planned += 1
        xs = [codes] if count == 1 else pair
        p, rest = plan["split"], plan["rest"]
        low = sum(x * part for x, part in zip(xs, plan["low"])) + plan["low_offset"]
        high = sum(x * part for x, part in zip(xs, plan["high"])) + plan["high_offset"] + ((low + 2**30) >> p) - 2**(30 - p)
        assert np.abs(low).max() < 2**30 and np.abs(high).max() < 2**30
        got = ((high + 2**30) >> rest) - 2**(30 - rest)
        want = (sum(x * m for x, m in zip(xs, multipliers)) + offset + 2 ** (shift - 1)) >> shift
        np.testing.assert_array_equal(np.clip(got, -511, 511), np.clip(want, -511, 511))
    assert planned > (65 if widest == 21 else 45), planned


def test_narrow_sum_is_the_exact_map():
    """ops/_qs8.narrow_sum's one multiply-add of two raw codes and a shift (as the C computes it: 2^30 added, a
    logical shift) is QuantizedAdd's int64 value on every pair of codes, clamped, for uint8 and int8 operands,
    multipliers of either size and sign, zero points and clamps."""
    rng = np.random.default_rng(2)
    found = 0
    for trial in range(6):
        dtypes = [(np.uint8, np.uint8), (np.int8, np.uint8), (np.int8, np.int8)][trial % 3]
        shift = int(rng.integers(28, 40))
        multipliers = [int(rng.uniform(-2, 2) * 2.0 ** (shift - rng.uniform(0, 4))) for _ in range(2)]
        zeros = [int(rng.integers(np.iinfo(d).min, np.iinfo(d).max + 1)) for d in dtypes]
        y_zero = int(rng.integers(0, 256))
        y_min, y_max = (y_zero, 255) if trial % 2 else (0, 255)
        narrow = narrow_sum(list(dtypes), zeros, multipliers, shift, y_zero, y_min, y_max)
        if narrow is None:
            continue
        found += 1
        (ma, mb), o, s = narrow
        a, b = (g.reshape(-1) for g in np.meshgrid(*[np.arange(np.iinfo(d).min, np.iinfo(d).max + 1, dtype=np.int64)
                                                     for d in dtypes], indexing="ij"))
        total = a * ma + b * mb + (o + 2**30)
        assert total.min() >= 0 and total.max() < 2**31
        got = np.clip((total >> s) - 2 ** (30 - s), y_min, y_max)
        exact = ((a - zeros[0]) * multipliers[0] + (b - zeros[1]) * multipliers[1] + 2 ** (shift - 1)) >> shift
        np.testing.assert_array_equal(got, np.clip(exact + y_zero, y_min, y_max))
    assert found >= 5, found


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_narrow_affine_is_the_exact_map(dtype):
    """ops/requantize.narrow_affine's one 32-bit multiply-add and shift (as the C computes it: 2^30 added, a
    logical shift) is the per-channel Requantize's int64 value on every code of every channel, clamped, for
    multipliers of either sign (a BatchNormalization's scale) from tiny to past 1, offsets, zero points, clamps."""
    rng = np.random.default_rng(1)
    codes = np.arange(np.iinfo(dtype).min, np.iinfo(dtype).max + 1, dtype=np.int64)
    found = 0
    for trial in range(12):
        shift = int(rng.integers(20, 36))
        multiplier = (rng.uniform(-2, 2, 16) * 2.0 ** rng.uniform(-8, 0, 16) * 2**shift).astype(np.int64)
        multiplier = np.clip(multiplier, -(2**30) + 1, 2**30 - 1)
        offset = rng.integers(-(2**(shift + 7)), 2**(shift + 7), 16)
        x_zero, y_zero = int(rng.integers(codes[0], codes[-1] + 1)), int(rng.integers(codes[0], codes[-1] + 1))
        y_min, y_max = (max(codes[0], y_zero), codes[-1]) if trial % 2 else (codes[0], codes[-1])
        narrow = narrow_affine(dtype, x_zero, multiplier, offset, shift, y_zero, y_min, y_max)
        if narrow is None:
            continue
        found += 1
        m, o, s = narrow
        total = codes[None] * m[:, None] + (o[:, None] + 2**30)
        assert total.min() >= 0 and total.max() < 2**31 and np.abs(o).max() < 2**30
        got = np.clip((total >> s) - 2 ** (30 - s), y_min, y_max)
        exact = ((codes[None] - x_zero) * multiplier[:, None] + offset[:, None] + 2 ** (shift - 1)) >> shift
        np.testing.assert_array_equal(got, np.clip(exact + y_zero, y_min, y_max))
    assert found >= 10, found


@pytest.mark.parametrize("weight_dtype,made", [(np.int8, {"QuantizedConv": 1}), (np.uint8, {})])
def test_qlinear_conv_becomes_quantized_conv(weight_dtype, made):
    """A QOperator QLinearConv with symmetric int8 weights takes the same integer op; uint8 weights (a zero
    point of 128) keep QLinearConv's own loop."""
    from tests.golden import node_model

    w = np.random.default_rng(1).integers(-100, 100, (3, 2, 3, 3)).astype(weight_dtype)
    inits = {"xs": np.float32(0.05), "xz": np.uint8(128), "w": w, "ws": np.float32(0.01),
             "wz": weight_dtype(0 if weight_dtype == np.int8 else 128), "ys": np.float32(0.2), "yz": np.uint8(120),
             "b": np.arange(3, dtype=np.int32)}
    model = node_model("QLinearConv", {"x": np.zeros((1, 2, 5, 5), np.uint8)}, ["y"],
                       {"pads": [1, 1, 1, 1], "_order": ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]},
                       opset=10, initializers=inits)
    graph = imported(model)
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == made
    assert [n.op_type for n in graph.nodes] == [next(iter(made), "QLinearConv")]


def qdq_maxpool(dtype=np.uint8, y_scale=0.05):
    """x -> Q -> DQ -> MaxPool (3x3, stride 2, padded) -> Q -> DQ -> y, on an odd-sized map."""
    zero = dtype(120 if dtype == np.uint8 else -7)
    inits = [numpy_helper.from_array(a, n) for n, a in {
        "xs": np.float32(0.05), "xz": zero, "ys": np.float32(y_scale), "yz": zero}.items()]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("MaxPool", ["xf"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              name="pool"),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    return make(nodes, [io("x", [1, 5, 7, 9])], [io("y", [1, 5, 4, 5])], inits)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_maxpool_island_runs_on_the_integers(dtype):
    graph = imported(qdq_maxpool(dtype))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {"MaxPool": 1} and report["left_in_float"] == []
    pool = next(n for n in graph.nodes if n.op_type == "MaxPool")
    assert pool.inputs[0].dtype == pool.outputs[0].dtype == np.dtype(dtype)


def test_maxpool_with_another_output_scale_is_requantized():
    graph = imported(qdq_maxpool(y_scale=0.1))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {"MaxPool": 1, "Requantize": 1} and report["left_in_float"] == []


@pytest.mark.parametrize("dtype,y_scale", [(np.uint8, 0.05), (np.int8, 0.05), (np.int8, 0.07)])
def test_maxpool_numbers(dtype, y_scale, target, tmp_path):
    """Bit-exact against onnxruntime with the input's parameters (on x86_64 the pool runs channels-last on the
    8-bit values), within one step of y with another scale (a rounding tie)."""
    check_model(qdq_maxpool(dtype, y_scale), {"x": rand(1, 5, 7, 9, seed=4) * 4}, target, tmp_path, rtol=0,
                atol=0 if y_scale == 0.05 else y_scale + 1e-6)


def qdq_concat(dtype=np.uint8, scales=(0.05, 0.03), zeros=(120, 100), y_scale=0.05, y_zero=120):
    """Two inputs quantized each with its own parameters -> DQ -> Concat on channels -> Q -> DQ -> y."""
    signed = dtype == np.int8
    shift = 128 if signed else 0
    inits = {"ys": np.float32(y_scale), "yz": dtype(y_zero - shift)}
    nodes = []
    for i, (s, z) in enumerate(zip(scales, zeros)):
        inits.update({f"s{i}": np.float32(s), f"z{i}": dtype(z - shift)})
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"s{i}", f"z{i}"], [f"q{i}"]),
                  helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"f{i}"])]
    nodes += [helper.make_node("Concat", ["f0", "f1"], ["c"], axis=1, name="concat"),
              helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    return make(nodes, [io("x0", [1, 3, 4, 5]), io("x1", [1, 2, 4, 5])], [io("y", [1, 5, 4, 5])],
                [numpy_helper.from_array(a, n) for n, a in inits.items()])


@pytest.mark.parametrize("scales,zeros,made", [((0.05, 0.05), (120, 120), {"Concat": 1}),
                                               ((0.05, 0.03), (120, 100), {"Concat": 1, "Requantize": 1})])
def test_concat_island_runs_on_the_integers(scales, zeros, made):
    graph = imported(qdq_concat(scales=scales, zeros=zeros))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == made and report["left_in_float"] == []
    concat = next(n for n in graph.nodes if n.op_type == "Concat")
    assert all(v.dtype == np.uint8 for v in [*concat.inputs, *concat.outputs])


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_concat_numbers_within_a_step(dtype, target, tmp_path):
    """The second input's scale is a third of the output's and its range overflows it: rounding and clamping."""
    x = {"x0": rand(1, 3, 4, 5, seed=5) * 3, "x1": rand(1, 2, 4, 5, seed=6) * 8}
    check_model(qdq_concat(dtype, scales=(0.05, 0.017), zeros=(120, 90), y_scale=0.05, y_zero=120), x, target,
                tmp_path, rtol=0, atol=0.05 + 1e-6)  # one step of y: a rounding tie decided the other way


def qdq_add(dtype=np.uint8, activation=None, op="Add", shape=(1, 4, 5, 6)):
    """Two inputs quantized each with its own parameters -> DQ -> Add (or a Sum of two) [-> Relu] -> Q -> DQ -> y."""
    shift = 128 if dtype == np.int8 else 0
    inits = {"s0": np.float32(0.05), "z0": dtype(120 - shift), "s1": np.float32(0.021), "z1": dtype(90 - shift),
             "ys": np.float32(0.06), "yz": dtype(110 - shift)}
    nodes = []
    for i in range(2):
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"s{i}", f"z{i}"], [f"q{i}"]),
                  helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"f{i}"])]
    nodes.append(helper.make_node(op, ["f0", "f1"], ["s"], name="add"))
    last = "s"
    if activation == "relu":
        nodes.append(helper.make_node("Relu", ["s"], ["r"]))
        last = "r"
    nodes += [helper.make_node("QuantizeLinear", [last, "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    return make(nodes, [io("x0", list(shape)), io("x1", list(shape))], [io("y", list(shape))],
                [numpy_helper.from_array(a, n) for n, a in inits.items()])


@pytest.mark.parametrize("activation,y_min,op", [(None, 0, "Add"), ("relu", 110, "Add"), (None, 0, "Sum")])
def test_add_island_becomes_quantized_add(activation, y_min, op):
    graph = imported(qdq_add(activation=activation, op=op))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {"QuantizedAdd": 1} and report["left_in_float"] == []
    assert [n.op_type for n in graph.nodes if n.op_type in ("Add", "Sum", "Relu")] == []
    add = next(n for n in graph.nodes if n.op_type == "QuantizedAdd")
    a = add.attrs
    assert (a["a_zero"], a["b_zero"], a["y_zero"], a["y_min"], a["y_max"]) == (120, 90, 110, y_min, 255)
    real = np.float64(np.float32(0.05)) / np.float64(np.float32(0.06))  # the larger ratio: multiplier in [2^30, 2^31)
    assert 2**30 <= a["a_multiplier"] < 2**31
    np.testing.assert_allclose(a["a_multiplier"] * 2.0 ** -a["shift"], real, rtol=2**-30)


@pytest.mark.parametrize("dtype,activation", [(np.uint8, None), (np.int8, "relu")])
def test_add_numbers_within_a_step(dtype, activation, target, tmp_path):
    x = {"x0": rand(1, 4, 5, 6, seed=7) * 4, "x1": rand(1, 4, 5, 6, seed=8) * 2}
    check_model(qdq_add(dtype, activation), x, target, tmp_path, rtol=0, atol=0.06 + 1e-6)  # one step of y


def test_add_every_code_pair_exact(target, tmp_path):
    """QuantizedAdd in 32-bit arithmetic (ops/_qs8.split_sum) is the int64 requantization bit for bit: every pair
    of input codes, against the node's own fixed-point formula."""
    codes = np.arange(256, dtype=np.int64)
    a, b = np.meshgrid(codes, codes, indexing="ij")
    model = qdq_add(activation="relu", shape=(1, 1, 256, 256))
    graph = imported(model)
    run_pass(graph, "lower_quantized_islands")
    at = next(n for n in graph.nodes if n.op_type == "QuantizedAdd").attrs
    total = (a - at["a_zero"]) * at["a_multiplier"] + (b - at["b_zero"]) * at["b_multiplier"] + 2 ** (at["shift"] - 1)
    y = np.clip((total >> at["shift"]) + at["y_zero"], at["y_min"], at["y_max"])
    feeds = {"x0": ((a - 120) * np.float32(0.05)).astype(np.float32)[None, None],
             "x1": ((b - 90) * np.float32(0.021)).astype(np.float32)[None, None]}
    expected = {"y": ((y - 110).astype(np.float32) * np.float32(0.06))[None, None]}
    check_model(model, feeds, target, tmp_path, rtol=0, atol=1e-6, expected=expected)


def qdq_average(dtype=np.uint8, y_scale=0.05, **pool):
    """x -> Q -> DQ -> AveragePool (or GlobalAveragePool without `pool` attributes) -> Q -> DQ -> y."""
    shift = 128 if dtype == np.int8 else 0
    inits = {"xs": np.float32(0.05), "xz": dtype(120 - shift), "ys": np.float32(y_scale), "yz": dtype(100 - shift)}
    op = "AveragePool" if pool else "GlobalAveragePool"
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node(op, ["xf"], ["p"], name="pool", **pool),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    out = [1, 5, 4, 5] if pool else [1, 5, 1, 1]
    return make(nodes, [io("x", [1, 5, 7, 9])], [io("y", out)], [numpy_helper.from_array(a, n) for n, a in inits.items()])


AVERAGES = {  # windows clipped by the padding (a table of multipliers by count), ceil_mode's last window, global
    "padded": dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "ceil_include_pad": dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1, count_include_pad=1),
    "global": {},
}


def test_average_pool_islands_run_on_the_integers():
    for pool in AVERAGES.values():
        graph = imported(qdq_average(**pool))
        report = run_pass(graph, "lower_quantized_islands")
        assert report["by_op"] == {"QuantizedAveragePool": 1} and report["left_in_float"] == []
        node = next(n for n in graph.nodes if n.op_type == "QuantizedAveragePool")
        assert node.inputs[0].dtype == node.outputs[0].dtype == np.uint8
        assert (node.attrs["x_zero"], node.attrs["y_zero"]) == (120, 100)
        assert node.attrs["kernel_shape"] == pool.get("kernel_shape", [7, 9])


@pytest.mark.parametrize("case,dtype,y_scale", [("padded", np.uint8, 0.05), ("ceil_include_pad", np.int8, 0.03)])
def test_average_pool_numbers_within_a_step(case, dtype, y_scale, target, tmp_path):
    """Against onnxruntime's float pool between DQ and Q: within one step of y (a tie the float reference
    decides the other way). Global pools: tests/quantized's convnet and mobile models."""
    check_model(qdq_average(dtype, y_scale, **AVERAGES[case]), {"x": rand(1, 5, 7, 9, seed=9) * 4}, target,
                tmp_path, rtol=0, atol=y_scale + 1e-6)


def qdq_elementwise(op, b_shape=None, b_const=None, **attrs):
    """x (int8) -> DQ -> op [with DQ(b), b an 8-bit input of b_shape or a constant] -> Q -> DQ -> y."""
    inits = {"xs": np.float32(0.05), "xz": np.int8(-3), "bs": np.float32(0.02), "bz": np.int8(5),
             "ys": np.float32(0.01), "yz": np.int8(-100)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 6])]
    operands = ["xf"]
    if b_shape is not None or b_const is not None:
        if b_const is not None:
            inits["b"] = np.int8(b_const)
            nodes.append(helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]))
        else:
            inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape))
            nodes += [helper.make_node("QuantizeLinear", ["b", "bs", "bz"], ["bq"]),
                      helper.make_node("DequantizeLinear", ["bq", "bs", "bz"], ["bf"])]
        operands.append("bf")
    nodes += [helper.make_node(op, operands, ["o"], name="op", **attrs),
              helper.make_node("QuantizeLinear", ["o", "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    return make(nodes, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 6])],
                [numpy_helper.from_array(a, n) for n, a in inits.items()])


@pytest.mark.parametrize("op,attrs,b_const", [("Sigmoid", {}, None), ("LeakyRelu", {"alpha": 0.2}, None),
                                              ("Mul", {}, 40), ("Add", {}, -7)])
def test_elementwise_of_one_tensor_becomes_a_table(op, attrs, b_const):
    """The table is the island at every code: DQ in float32, the op, Q (rint of y / scale, saturated)."""
    graph = imported(qdq_elementwise(op, b_const=b_const, **attrs))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {"QuantizedLookup": 1} and report["left_in_float"] == []
    table = next(n for n in graph.nodes if n.op_type == "QuantizedLookup").inputs[1].data
    x = (np.arange(256, dtype=np.uint8).view(np.int8).astype(np.float32) + 3) * np.float32(0.05)
    b = (np.float32(b_const or 0) - 5) * np.float32(0.02)
    y = {"Sigmoid": lambda: 1 / (1 + np.exp(-x)), "LeakyRelu": lambda: np.where(x >= 0, x, np.float32(0.2) * x),
         "Mul": lambda: x * b, "Add": lambda: x + b}[op]().astype(np.float32)
    expected = np.clip(np.rint(y / np.float32(0.01)) - 100, -128, 127)
    assert table.dtype == np.int8 and np.abs(table.astype(np.int64) - expected).max() <= (1 if op == "Sigmoid" else 0)


@pytest.mark.parametrize("op,made", [("Mul", "QuantizedMul"), ("Add", "QuantizedAdd")])
def test_binary_island_broadcasts(op, made):
    """Two 8-bit tensors, one [1, 4, 1, 1] broadcast over the other (squeeze-and-excitation's Mul)."""
    graph = imported(qdq_elementwise(op, b_shape=[1, 4, 1, 1]))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {made: 1} and report["left_in_float"] == []
    node = next(n for n in graph.nodes if n.op_type == made)
    assert [v.shape for v in node.inputs] == [(1, 4, 5, 6), (1, 4, 1, 1)]
    if op == "Mul":  # 0.05 * 0.02 / 0.01 = 0.1
        real = np.float64(np.float32(0.05)) * np.float64(np.float32(0.02)) / np.float64(np.float32(0.01))
        np.testing.assert_allclose(node.attrs["multiplier"] * 2.0 ** -node.attrs["shift"], real, rtol=2**-30)



@pytest.mark.parametrize("y_scale,made", [(0.05, {"Flatten": 1}), (0.1, {"Flatten": 1, "Requantize": 1})])
def test_flatten_island_runs_on_the_integers(y_scale, made):
    """A Flatten between DQ and Q (a classifier's) moves the 8-bit values; another output scale adds a Requantize."""
    inits = {"xs": np.float32(0.05), "xz": np.uint8(120), "ys": np.float32(y_scale), "yz": np.uint8(120)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("Flatten", ["xf"], ["f"], name="flatten"),
             helper.make_node("QuantizeLinear", ["f", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    model = make(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 2, 2])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])],
                 [numpy_helper.from_array(a, n) for n, a in inits.items()])
    graph = imported(model)
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == made and report["left_in_float"] == []
    flatten = next(n for n in graph.nodes if n.op_type == "Flatten")
    assert flatten.inputs[0].dtype == flatten.outputs[0].dtype == np.uint8


def test_softmax_numbers(target, tmp_path, dtype=np.uint8):
    """Rows of 37 codes -> QuantizedSoftmax (no float tensor left), against onnxruntime's float Softmax between
    DQ and Q: bit-exact here, at most one step where a rounding sits at .5 within an ulp. (int8, broadcast
    Mul and Add: tests/quantized's mlp, attention and mobile models.)"""
    shift = 128 if dtype == np.int8 else 0
    inits = {"xs": np.float32(0.07), "xz": dtype(130 - shift), "ys": np.float32(1 / 256), "yz": dtype(0 - shift)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("Softmax", ["xf"], ["p"], axis=-1, name="softmax"),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3, 37])
    model = make(nodes, [io("x")], [io("y")], [numpy_helper.from_array(a, n) for n, a in inits.items()])
    graph = imported(model)
    assert run_pass(graph, "lower_quantized_islands")["by_op"] == {"QuantizedSoftmax": 1}
    check_model(model, {"x": rand(2, 3, 37, seed=12) * 3}, target, tmp_path, rtol=0, atol=1 / 256 + 1e-6)


@pytest.mark.parametrize("op_type,made", [("QLinearGlobalAveragePool", "QuantizedAveragePool"),
                                          ("QLinearAveragePool", "QuantizedAveragePool"),
                                          ("QLinearSigmoid", "QuantizedLookup"), ("QLinearLeakyRelu", "QuantizedLookup"),
                                          ("QLinearSoftmax", "QuantizedSoftmax"), ("QLinearMul", "QuantizedMul"),
                                          ("QLinearAdd", "QuantizedAdd")])
def test_qoperator_ops_take_the_integer_forms(op_type, made):
    """com.microsoft's QLinear ops import as DQ -> op -> Q islands and so become the same integer ops (their
    numbers against onnxruntime's own kernels: tests/quantized)."""
    from tests.quantized.test_qoperator_nodes import _model

    x, b = np.zeros((1, 4, 5, 5), np.uint8), np.zeros((1, 4, 1, 1), np.uint8)
    binary = op_type in ("QLinearMul", "QLinearAdd")
    inputs = {"x": x.reshape(4, 25) if op_type == "QLinearSoftmax" else x, **({"b": b} if binary else {})}
    order = ["x", "xs", "xz", *(["b", "bs", "bz"] if binary else []), "ys", "yz"]
    attrs = {"QLinearSoftmax": {"axis": -1, "opset": 13}, "QLinearLeakyRelu": {"alpha": 0.1},
             "QLinearAveragePool": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}}.get(op_type, {})
    shape = {"QLinearGlobalAveragePool": (1, 4, 1, 1), "QLinearSoftmax": (4, 25)}.get(op_type, (1, 4, 5, 5))
    inits = {"xs": np.float32(0.05), "xz": np.uint8(128), "ys": np.float32(0.04), "yz": np.uint8(120),
             **({"bs": np.float32(0.03), "bz": np.uint8(100)} if binary else {})}
    graph = imported(_model(op_type, inputs, inits, {**attrs, "_order": order}, (np.uint8, shape)))
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {made: 1} and report["left_in_float"] == []


def qdq_batch_norm():
    """x -> Q -> DQ -> BatchNormalization (its scale a DequantizeLinear of int8, negative scales too) -> Relu -> Q
    -> DQ -> y, 5 channels of 16 x 16; and its initializers."""
    rng = np.random.default_rng(3)
    gamma = np.array([-90, -7, 1, 40, 127], np.int8)
    inits = {"xs": np.float32(0.05), "xz": np.uint8(120), "ys": np.float32(0.07), "yz": np.uint8(30),
             "g": gamma, "gs": np.float32(0.02), "gz": np.int8(0), "b": rng.standard_normal(5).astype(np.float32),
             "m": rng.standard_normal(5).astype(np.float32), "v": rng.uniform(0.5, 2, 5).astype(np.float32)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["g", "gs", "gz"], ["gf"]),
             helper.make_node("BatchNormalization", ["xf", "gf", "b", "m", "v"], ["bn"], name="bn"),
             helper.make_node("Relu", ["bn"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    io = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
    return make(nodes, [io("x", [1, 5, 16, 16])], [io("y", [1, 5, 16, 16])],
                [numpy_helper.from_array(a, n) for n, a in inits.items()]), inits


def per_channel_requantize(model):
    """The Requantize lower_quantized_islands makes of qdq_batch_norm: its attributes, multipliers and offsets."""
    graph = imported(model)
    run_pass(graph, "lower_quantized_islands")
    node = next(n for n in graph.nodes if n.op_type == "Requantize")
    return node.attrs, *(np.asarray(v.data, np.int64).reshape(-1) for v in node.inputs[1:3])


def test_batch_norm_island_becomes_a_per_channel_requantize():
    """DQ -> BatchNormalization (as onnxruntime's quantizer leaves an unfolded one) -> Relu -> Q: a Requantize with
    a multiplier and an offset per channel over one shift. On every code of every channel it is the float
    island's value (float32, rint) but for ties."""
    model, inits = qdq_batch_norm()
    gamma = inits["g"]
    graph = imported(model)
    report = run_pass(graph, "lower_quantized_islands")
    assert report["by_op"] == {"Requantize": 1} and report["left_in_float"] == []
    node = next(n for n in graph.nodes if n.op_type == "Requantize")
    a = node.attrs
    assert (a["x_zero"], a["y_zero"], a["y_min"], a["y_max"]) == (120, 30, 30, 255)
    multiplier, offset = (np.asarray(v.data, np.int64).reshape(-1) for v in node.inputs[1:3])
    codes = np.arange(256, dtype=np.int64)[:, None]
    got = np.clip(((codes - 120) * multiplier + offset + 2 ** (a["shift"] - 1)) >> a["shift"], a["y_min"] - 30, 225) + 30
    g = (gamma.astype(np.float32) * np.float32(0.02)).astype(np.float32)
    x = ((codes - 120).astype(np.float32) * np.float32(0.05)).astype(np.float32)
    bn = (x - inits["m"]) / np.sqrt(inits["v"] + np.float32(1e-5)) * g + inits["b"]
    want = np.clip(np.rint(np.maximum(bn, 0) / np.float32(0.07)) + 30, 0, 255)
    assert np.abs(got - want).max() <= 1 and np.mean(got == want) > 0.99


def test_batch_norm_every_code_exact(target, tmp_path):
    """The per-channel Requantize in 32-bit arithmetic (ops/_qs8.split_sum, its parts as tables) is the int64
    formula bit for bit on every code of every channel."""
    model, _ = qdq_batch_norm()
    a, multiplier, offset = per_channel_requantize(model)
    codes = np.arange(256, dtype=np.int64).reshape(16, 16)
    total = (codes[None] - a["x_zero"]) * multiplier[:, None, None] + offset[:, None, None] + 2 ** (a["shift"] - 1)
    y = np.clip((total >> a["shift"]) + a["y_zero"], a["y_min"], a["y_max"])
    feeds = {"x": ((np.broadcast_to(codes, (5, 16, 16)) - 120) * np.float32(0.05)).astype(np.float32)[None]}
    expected = {"y": ((y - 30).astype(np.float32) * np.float32(0.07))[None]}
    check_model(model, feeds, target, tmp_path, rtol=0, atol=1e-6, expected=expected)
