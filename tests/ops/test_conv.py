"""Golden tests of Conv and ConvTranspose (f32-gemm + f32-conv kernels) against onnxruntime, on every target.

Channel and pixel counts are off the GEMM tiles so panel and row tails run; one case is large enough to
be packed in several pixel chunks. Tolerance rtol=1e-4, atol=1e-4: sums of up to a few hundred products
in another order (and with fused multiply-adds) than onnxruntime's.
"""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-4, atol=1e-4)

CONV_CASES = [
    ((1, 3, 9, 11), (4, 3, 3, 3), {}),
    ((2, 4, 9, 11), (6, 4, 1, 1), {}),  # pointwise: no im2col
    ((1, 5, 7, 6), (7, 5, 1, 1), {"strides": [2, 2]}),  # 1x1 but strided: im2col
    ((1, 4, 9, 11), (6, 2, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    ((1, 4, 9, 11), (4, 1, 3, 3), {"group": 4, "pads": [1, 0, 1, 2], "strides": [2, 2]}),  # depthwise
    ((2, 4, 9, 11), (8, 1, 3, 3), {"group": 4, "auto_pad": "SAME_UPPER", "strides": [2, 1]}),  # multiplier 2
    ((1, 6, 8, 9), (6, 1, 5, 5), {"group": 6, "pads": [2, 2, 2, 2], "dilations": [1, 2]}),
    ((1, 3, 10, 11), (5, 3, 3, 2), {"auto_pad": "SAME_LOWER", "strides": [2, 3]}),
    ((1, 3, 10, 11), (5, 3, 3, 2), {"auto_pad": "VALID", "dilations": [2, 2]}),
    # a stem's k of 147: im2col + f32-gemm on x86 (direct_conv_max_k), the direct kernel elsewhere
    ((1, 3, 10, 11), (5, 3, 7, 7), {"kernel_shape": [7, 7], "pads": [0, 2, 1, 0], "strides": [3, 2]}),
    ((2, 3, 17), (5, 3, 4), {"pads": [2, 1], "strides": [2]}),  # 1-D
    ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"pads": [1, 0, 1, 0, 1, 1]}),  # 3-D
    ((1, 16, 13, 13), (40, 16, 3, 3), {"pads": [1, 1, 1, 1]}),
    # grouped 1x1 (ShuffleNet): the pixels as one row; 28 channels a group, two 2-vector panels on AVX2
    ((2, 20, 5, 7), (112, 5, 1, 1), {"group": 4}),
]


@pytest.mark.parametrize("x_shape,w_shape,attrs", CONV_CASES, ids=[str(c[2]) + str(c[1]) for c in CONV_CASES])
def test_conv(x_shape, w_shape, attrs, target, tmp_path):
    x, w, b = rand(*x_shape), rand(*w_shape, seed=5), rand(w_shape[0], seed=6)
    model = node_model("Conv", {"x": x}, ["y"], attrs, initializers={"w": w, "b": b})
    check_model(model, {"x": x}, target, tmp_path, **TOL)


@pytest.mark.parametrize("x_shape,w_shape,attrs", [CONV_CASES[0], CONV_CASES[3], CONV_CASES[4]], ids=str)
def test_conv_weights_as_input_without_bias(x_shape, w_shape, attrs, target, tmp_path):
    x, w = rand(*x_shape), rand(*w_shape, seed=5)
    check_model(node_model("Conv", {"x": x, "w": w}, ["y"], attrs), {"x": x, "w": w}, target, tmp_path, **TOL)


@pytest.mark.parametrize("opset", [7, 11])
def test_conv_opsets(opset, target, tmp_path):
    x, w, b = rand(1, 3, 8, 8), rand(4, 3, 3, 3, seed=5), rand(4, seed=6)
    model = node_model("Conv", {"x": x}, ["y"], {"pads": [1, 1, 1, 1]}, opset=opset, initializers={"w": w, "b": b})
    check_model(model, {"x": x}, target, tmp_path, **TOL)


def test_conv_pixel_chunks(target, tmp_path):
    # 150x150 pixels of 27 taps exceed the 2 MiB column budget: packed in several chunks
    x, w, b = rand(1, 3, 150, 150), rand(4, 3, 3, 3, seed=5), rand(4, seed=6)
    model = node_model("Conv", {"x": x}, ["y"], {"pads": [1, 1, 1, 1]}, initializers={"w": w, "b": b})
    check_model(model, {"x": x}, target, tmp_path, **TOL)


TRANSPOSE_CASES = [
    ((1, 3, 5, 6), (3, 4, 3, 3), {}),
    ((2, 4, 5, 6), (4, 3, 3, 3), {"group": 2, "strides": [2, 2], "pads": [1, 0, 1, 1]}),
    ((1, 3, 5, 6), (3, 2, 3, 2), {"strides": [2, 3], "output_padding": [1, 2], "dilations": [2, 1]}),
    ((1, 3, 5, 6), (3, 2, 3, 3), {"strides": [2, 2], "output_shape": [10, 12]}),
    ((1, 3, 5, 6), (3, 2, 3, 3), {"strides": [2, 2], "output_shape": [10, 13], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 5, 6), (3, 2, 3, 4), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
    ((1, 3, 5, 6), (3, 2, 3, 4), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
    ((1, 3, 5, 6), (3, 2, 3, 3), {"auto_pad": "VALID", "strides": [1, 2]}),
    ((2, 3, 7), (3, 2, 4), {"strides": [3], "pads": [1, 2]}),  # 1-D
    ((1, 4, 3, 4, 5), (4, 1, 2, 3, 2), {"group": 4, "strides": [2, 1, 2]}),  # 3-D, depthwise
    ((1, 20, 9, 9), (20, 37, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
]


@pytest.mark.parametrize("x_shape,w_shape,attrs", TRANSPOSE_CASES, ids=[str(c[2]) + str(c[1]) for c in TRANSPOSE_CASES])
def test_conv_transpose(x_shape, w_shape, attrs, target, tmp_path):
    x, w = rand(*x_shape), rand(*w_shape, seed=5)
    b = rand(w_shape[1] * attrs.get("group", 1), seed=6)
    model = node_model("ConvTranspose", {"x": x}, ["y"], attrs, initializers={"w": w, "b": b})
    check_model(model, {"x": x}, target, tmp_path, **TOL)


def test_conv_transpose_weights_as_input(target, tmp_path):
    x, w = rand(1, 4, 5, 6), rand(4, 3, 3, 3, seed=5)
    model = node_model("ConvTranspose", {"x": x, "w": w}, ["y"], {"group": 2, "strides": [2, 1]})
    check_model(model, {"x": x, "w": w}, target, tmp_path, **TOL)


def test_stems_past_the_targets_direct_k_take_im2col():
    from mlcc.ops import _conv_direct
    from mlcc.targets import resolve

    x86, wasm = resolve("x86_64"), resolve("wasm32")
    assert _conv_direct.applies(x86, 1, 3, 16, 9)  # ResNet-8's 3x3 stem, k 27
    assert not _conv_direct.applies(x86, 1, 3, 64, 49)  # ResNet-50's 7x7 stem, k 147
    assert _conv_direct.applies(wasm, 1, 3, 64, 49)  # no bound there


def test_flops():
    from mlcc import ops
    from mlcc.ir import Node, Value
    f32 = np.dtype(np.float32)
    x, w = Value("x", f32, (2, 4, 9, 11)), Value("w", f32, (6, 2, 3, 3))
    node = Node("Conv", "c", [x, w], [Value("y", f32, (2, 6, 9, 11))],
                {"auto_pad": "NOTSET", "group": 2, "pads": [1, 1, 1, 1]}, opset=17)
    assert ops.lookup("Conv").flops(node) == 2 * 2 * 6 * 9 * 11 * 2 * 9
