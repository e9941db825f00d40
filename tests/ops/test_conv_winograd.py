"""Golden tests of channels-last 3x3 and 5x5 (stride 1 and 2) convolutions run as Winograd F(4x4, 3x3)
(mlcc/ops/_winograd.py, runtime_c/kernels/f32-winograd) against onnxruntime: sizes off the 4-pixel tiles, asymmetric and no padding,
two images, several chunks of tiles, no bias, fused residual and activations, and outputs written into a
Concat's channel slice. Each test also asserts the generated C took the Winograd path.

Weights are scaled by 1 / sqrt(fan-in) as in trained networks, so outputs are about unit scale: the
transforms round to about 1e-5 of the output's scale (inputs are combined with coefficients up to 5 and
products with up to 8 before the sums cancel), and tolerance rtol=1e-4, atol=1e-4 as tests/ops/test_conv.py
then checks that with a margin of ten."""

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from mlcc import runners
from mlcc.pipeline import BuildOptions, build
from mlcc.targets import resolve
from mlcc.verify import compare, reference_outputs
from tests.golden import check_model, node_model, rand, split_target

# the transformed weights stored in the blob (--optimize-for speed); wasm32's default prepares them at load
# time in the arena instead (test_winograd_weights_prepared_at_load)
TOL = dict(rtol=1e-4, atol=1e-4, optimize_for="speed")


def weights(*shape, seed: int) -> np.ndarray:
    return rand(*shape, seed=seed) / np.float32(np.sqrt(np.prod(shape[1:])))


def uses_winograd(tmp_path, convolutions: int) -> bool:
    sources = [p.read_text() for p in tmp_path.glob("out-*/*.c")]
    # the output transform's form for the target's SIMD shim (mlcc_f32_winograd_output__avx512, ...__scalar),
    # called or handed to the parallel driver: once per convolution
    return sum(len(re.findall(r"\bmlcc_f32_winograd_output__[a-z0-9]+\b", s)) for s in sources) == convolutions


CASES = [
    ((1, 16, 13, 13), (40, 16, 3, 3), {"pads": [1, 1, 1, 1]}),
    ((2, 24, 18, 21), (20, 24, 3, 3), {"pads": [1, 0, 2, 1]}),  # asymmetric pads, edge tiles cut
    ((1, 8, 20, 17), (9, 8, 3, 3), {}),  # no padding: 18 x 15 outputs
    ((1, 16, 90, 90), (16, 16, 3, 3), {"auto_pad": "SAME_UPPER"}),  # 529 tiles: several chunks
    ((1, 64, 16, 16), (64, 64, 3, 3), {"pads": [1, 1, 1, 1]}),  # vector-wide channels on every target
    ((1, 24, 24, 24), (40, 12, 3, 3), {"pads": [1, 1, 1, 1], "group": 2}),  # groups one at a time, min_tiles each
    ((2, 48, 26, 27), (48, 16, 3, 3), {"pads": [1, 0, 1, 2], "group": 3}),
    # 5x5 as four 3x3 pieces: pads 2 (GoogLeNet), none, asymmetric and wider than the pieces' step
    ((1, 16, 14, 15), (24, 16, 5, 5), {"pads": [2, 2, 2, 2]}),
    ((1, 8, 21, 20), (12, 8, 5, 5), {}),
    ((2, 12, 17, 15), (10, 12, 5, 5), {"pads": [4, 0, 1, 3]}),
    ((1, 32, 24, 24), (32, 16, 5, 5), {"pads": [2, 2, 2, 2], "group": 2}),  # AlexNet's conv2
    # 5x5 stride 2 in phases: no pads and odd sizes (ZFNet), asymmetric pads, grouped
    ((1, 16, 39, 41), (24, 16, 5, 5), {"strides": [2, 2]}),
    ((2, 8, 35, 38), (12, 8, 5, 5), {"strides": [2, 2], "pads": [2, 1, 1, 2]}),
    ((1, 32, 48, 48), (32, 16, 5, 5), {"strides": [2, 2], "pads": [2, 2, 2, 2], "group": 2}),
]


@pytest.mark.parametrize("x_shape,w_shape,attrs", CASES, ids=[str(c[0]) for c in CASES])
def test_winograd_conv(x_shape, w_shape, attrs, target, tmp_path):
    x, w, b = rand(*x_shape), weights(*w_shape, seed=5), rand(w_shape[0], seed=6)
    model = node_model("Conv", {"x": x}, ["y"], attrs, initializers={"w": w, "b": b})
    check_model(model, {"x": x}, target, tmp_path, **TOL)
    assert uses_winograd(tmp_path, 1)


def model_weights(target: str) -> dict:
    """Build options for the weights policy "model" (Winograd's weights prepared at load time in the arena):
    wasm32's own default; forced on a target whose policy is "speed" (host)."""
    return {} if resolve(split_target(target)[0]).weights_policy == "model" else {"weights_policy": "model"}


# a grouped 3x3, a 5x5 and a grouped 5x5 at stride 2 (phases)
PREPARED_CASES = [CASES[5], CASES[9], CASES[13]]


@pytest.mark.parametrize("x_shape,w_shape,attrs", PREPARED_CASES, ids=[str(c[0]) for c in PREPARED_CASES])
def test_winograd_weights_prepared_at_load(x_shape, w_shape, attrs, target, tmp_path):
    """Under the weights policy "model" the blob holds the model's own kernel and the run function
    transforms it into the arena's prepared region (mlcc_f32_winograd_transform_weights) on first use."""
    x, w, b = rand(*x_shape), weights(*w_shape, seed=5), rand(w_shape[0], seed=6)
    model = node_model("Conv", {"x": x}, ["y"], attrs, initializers={"w": w, "b": b})
    report = check_model(model, {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-4, **model_weights(target))
    assert uses_winograd(tmp_path, 1)
    assert report["optimized_for"]["weights"] == "model"
    assert report["optimized_for"]["prepared_at_load_bytes"] >= 36 * w.nbytes // w_shape[-1] ** 2
    assert report["weights_bytes"] <= w.nbytes + b.nbytes + 2 * 64  # the model's own, each 64-byte aligned
    source = next(tmp_path.glob("out-*/*.c")).read_text()
    assert "mlcc_f32_winograd_transform_weights(" in source


def test_equal_kernels_prepared_once(target, tmp_path):
    """Two convolutions whose kernels are equal (two tensors, one content: the zoo's shipped fills) share
    one prepared transform, and the blob holds only the kernel its preparation reads (an unused second one
    was an unused variable, which -Werror refuses)."""
    w = weights(16, 16, 3, 3, seed=1)
    inits = {"wa": w, "wb": w.copy()}
    nodes = [helper.make_node("Conv", ["x", "wa"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["a", "wb"], ["y"], pads=[1, 1, 1, 1])]
    x = rand(1, 16, 17, 19)
    report = check_model(_graph(nodes, (1, 16, 17, 19), inits), {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-4,
                         **model_weights(target))
    assert uses_winograd(tmp_path, 2)
    source = next(tmp_path.glob("out-*/*.c")).read_text()
    assert source.count("mlcc_f32_winograd_transform_weights(") == 1
    assert report["weights_bytes"] == w.nbytes  # one kernel, 64-byte aligned already


def test_prepared_weights_reused_on_an_arena_and_made_on_another(target, tmp_path):
    """Two runs on one arena (the second finds the marker and reuses the prepared weights) and one on a
    second arena (which prepares its own), each against onnxruntime. On host, where the test can reach the
    arena: with the prepared weights overwritten but the marker kept, a run computes something else (so it
    did reuse them); with the marker cleared, it prepares them again and is right."""
    x_shape, w_shape, attrs = CASES[0]
    w, b = weights(*w_shape, seed=5), rand(w_shape[0], seed=6)
    feeds = [{"x": rand(*x_shape, seed=seed)} for seed in (1, 2)]
    model = node_model("Conv", feeds[0], ["y"], attrs, initializers={"w": w, "b": b})
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    name, runner = split_target(target)
    out_dir, report = build(path, BuildOptions(target=name, out_dir=tmp_path / "out", **model_weights(target)))
    prepared = report["optimized_for"]["prepared_at_load_bytes"]
    assert prepared > 0

    def check(loaded, feed) -> None:
        expected, _ = reference_outputs(model, feed, ["y"])
        assert compare(loaded.run(feed)["y"], expected["y"], 1e-4, 1e-4).ok

    first, second = runners.load(out_dir, runner=runner), runners.load(out_dir, runner=runner)
    check(first, feeds[0])
    check(first, feeds[1])
    check(second, feeds[1])
    arena = getattr(first, "arena", None)
    if isinstance(arena, np.ndarray):  # the host runner's own buffer
        assert arena[:8].any()  # the marker
        arena[64:prepared] = 0
        expected, _ = reference_outputs(model, feeds[0], ["y"])
        assert not compare(first.run(feeds[0])["y"], expected["y"], 1e-4, 1e-4).ok
        arena[:8] = 0
        check(first, feeds[0])


def test_winograd_conv_without_bias(target, tmp_path):
    x, w = rand(1, 12, 17, 15), weights(10, 12, 3, 3, seed=5)
    model = node_model("Conv", {"x": x}, ["y"], {"pads": [1, 1, 1, 1]}, initializers={"w": w})
    check_model(model, {"x": x}, target, tmp_path, **TOL)
    assert uses_winograd(tmp_path, 1)


def _graph(nodes, x_shape, inits):
    graph = helper.make_graph(nodes, "winograd", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, n) for n, w in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return onnx.shape_inference.infer_shapes(m)


def test_winograd_residual_block(target, tmp_path):
    """ResNet's basic block: conv, relu, conv, + x, relu (the residual and ReLU fused into the second)."""
    inits = {"w1": weights(16, 16, 3, 3, seed=1), "b1": rand(16, seed=2), "w2": weights(16, 16, 3, 3, seed=3),
               "b2": rand(16, seed=4)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c2", "x"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    x = rand(1, 16, 17, 19)
    check_model(_graph(nodes, (1, 16, 17, 19), inits), {"x": x}, target, tmp_path, **TOL)
    assert uses_winograd(tmp_path, 2)


def test_winograd_grouped_residual(target, tmp_path):
    """A grouped convolution with the residual and ReLU fused: each group's epilogue reads its own channels."""
    inits = {"w": weights(32, 16, 3, 3, seed=1), "b": rand(32, seed=2)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], group=2),
             helper.make_node("Add", ["c", "x"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    x = rand(2, 32, 22, 23)
    check_model(_graph(nodes, (2, 32, 22, 23), inits), {"x": x}, target, tmp_path, **TOL)
    assert uses_winograd(tmp_path, 1)


@pytest.mark.parametrize("target_name", ["x86_64", "aarch64", "armv7", "riscv64", "riscv64-scalar"])
def test_winograd_residual_block_on_other_targets(target_name, tmp_path):
    """The channels-last targets the `target` fixture leaves out: AVX2, NEON and RVV under qemu-user, and
    riscv64-scalar's portable transforms (x86_64-baseline and wasm32-scalar run convolutions NCHW)."""
    test_winograd_residual_block(target_name, tmp_path)


def test_winograd_into_concat_channels(target, tmp_path):
    """Two branches written straight into their channel slices of a Concat (a row pitch past the channels)."""
    inits = {"wa": weights(12, 8, 3, 3, seed=1), "ba": rand(12, seed=2), "wb": weights(20, 8, 3, 3, seed=3),
               "bb": rand(20, seed=4), "wy": weights(5, 32, 1, 1, seed=5)}
    nodes = [helper.make_node("Conv", ["x", "wa", "ba"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "wb", "bb"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["b"]),
             helper.make_node("Concat", ["a", "b"], ["cat"], axis=1),
             helper.make_node("Conv", ["cat", "wy"], ["y"])]
    x = rand(1, 8, 18, 14)
    report = check_model(_graph(nodes, (1, 8, 18, 14), inits), {"x": x}, target, tmp_path, **TOL)
    assert uses_winograd(tmp_path, 2)
    assert report["memory_sharing"]["written_into_concat_channels"] == 2


@pytest.mark.parametrize("options", [dict(disabled_passes=("choose_winograd",)), dict(opt_level=1)], ids=str)
def test_direct_convolution_when_the_pass_is_off(options, target, tmp_path):
    x, w, b = rand(1, 16, 13, 13), weights(40, 16, 3, 3, seed=5), rand(40, seed=6)
    model = node_model("Conv", {"x": x}, ["y"], {"pads": [1, 1, 1, 1]}, initializers={"w": w, "b": b})
    report = check_model(model, {"x": x}, target, tmp_path, **TOL, **options)
    assert uses_winograd(tmp_path, 0)
    assert report["weights_bytes"] < 4 * w.nbytes  # the 3x3 weights, not their 6x6 transforms


def test_which_convolutions_take_winograd():
    """3x3 at stride 1, 5x5 at stride 1 or 2; a grouped convolution needs the target's minimum of tiles per group
    (AlexNet's 13x13 conv4: Winograd on wasm32, direct on AVX-512 where its two groups' products are too
    small); fewer tiles where the transformed weights fit L2."""
    from mlcc.ops import _winograd
    from mlcc.ops._conv import ConvGeometry
    from mlcc.targets import optimized_for, resolve

    avx512, wasm = resolve("x86_64-avx512"), optimized_for(resolve("wasm32"), "speed")

    def geometry(side, kernel, stride=1):
        return ConvGeometry(inp=[side, side], out=[(side + 2 * (kernel // 2) - kernel) // stride + 1] * 2,
                            kernel=[kernel] * 2, stride=[stride] * 2, dilation=[1, 1], pad=[kernel // 2] * 2)

    assert _winograd.applies(avx512, geometry(13, 3), 1, 384, 384)
    assert _winograd.applies(wasm, geometry(13, 3), 2, 192, 192)
    assert not _winograd.applies(avx512, geometry(13, 3), 2, 192, 192)
    assert _winograd.applies(avx512, geometry(27, 5), 2, 48, 128)
    assert _winograd.applies(wasm, geometry(27, 5, stride=2), 1, 96, 256)  # ZFNet's conv2, in phases
    assert not _winograd.applies(wasm, geometry(27, 3, stride=2), 1, 96, 256)  # phases would save nothing
    assert not _winograd.applies(wasm, geometry(27, 7), 1, 96, 256)
    assert not _winograd.applies(wasm, geometry(27, 3), 1, 4, 64)  # too few channels: the transforms cost more
    # 4 tiles (8x8 outputs): enough where the transformed weights fit the core's L2 (ResNet-8's 64 -> 64,
    # 590 KB), not where they stream from memory (ResNet-50's 7x7 512 -> 512, 38 MB)
    avx2 = resolve("x86_64")
    for target in (avx2, avx512):
        assert _winograd.applies(target, geometry(8, 3), 1, 64, 64)
        assert not _winograd.applies(target, geometry(7, 3), 1, 512, 512)
        assert not _winograd.applies(target, geometry(4, 3), 1, 64, 64)  # one tile
    assert not _winograd.applies(avx2, geometry(8, 3), 1, 128, 128)  # 2.4 MB of transforms: beyond 1 MB of L2
    # wasm32's default keeps the model's weights and prepares the transformed ones at load time
    assert _winograd.applies(resolve("wasm32"), geometry(13, 3), 1, 384, 384)
    assert _winograd.prepared_at_load(resolve("wasm32")) and not _winograd.prepared_at_load(wasm)
    # where memory binds (bare metal's default, --optimize-for size): never
    for kept in (resolve("cortex-m4"), optimized_for(resolve("wasm32"), "size"), optimized_for(avx512, "size")):
        assert not _winograd.applies(kept, geometry(13, 3), 1, 384, 384)
