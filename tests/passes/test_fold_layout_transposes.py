"""fold_layout_transposes: a stem convolution on the direct kernel reads the model's NCHW image where it is
(its table holds each channel's plane, its pixels one float apart), so the layout Transpose in front of it
goes; an image another node also reads keeps the copy. Numerics against onnxruntime on each target: a 3x3
stride-2 stem and a 1x1 one (the kernel's pixels as one row), two images each (the image stride)."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from mlcc.ops._layout import CHANNELS_FIRST_INPUT
from tests.golden import check_model, rand
from tests.passes.util import imported, make, run_pass, text

F = TensorProto.FLOAT
N, H, W = 2, 17, 19


def _init(name, *shape, seed=0):
    return numpy_helper.from_array((np.random.default_rng(seed).standard_normal(shape) * 0.3).astype(np.float32), name)


def stems(shared: bool = False):
    """A 3x3 stride-2 convolution of an RGB image and a 1x1 one of a two-channel map, each with a ReLU; `shared`:
    a max pooling reads the RGB image too."""
    nodes = [helper.make_node("Conv", ["rgb", "w3", "b3"], ["a"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], name="stem3x3"),
             helper.make_node("Relu", ["a"], ["y"], name="relu3x3"),
             helper.make_node("Conv", ["depth", "w1"], ["d"], kernel_shape=[1, 1], name="stem1x1"),
             helper.make_node("Relu", ["d"], ["z"], name="relu1x1")]
    outputs = [helper.make_tensor_value_info("y", F, [N, 16, 9, 10]), helper.make_tensor_value_info("z", F, [N, 8, H, W])]
    if shared:
        nodes.append(helper.make_node("MaxPool", ["rgb"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"))
        outputs.append(helper.make_tensor_value_info("p", F, [N, 3, 8, 9]))
    inputs = [helper.make_tensor_value_info("rgb", F, [N, 3, H, W]), helper.make_tensor_value_info("depth", F, [N, 2, H, W])]
    return make(nodes, inputs, outputs, [_init("w3", 16, 3, 3, 3), _init("b3", 16, seed=1), _init("w1", 8, 2, 1, 1, seed=2)])


def _optimised(model):
    graph = imported(model)
    for name in ("fuse_epilogues", "choose_layout", "choose_winograd", "fold_channel_permutations"):
        run_pass(graph, name)
    return graph, run_pass(graph, "fold_layout_transposes")


def test_stems_read_the_images_where_they_are():
    graph, did = _optimised(stems())
    assert did == {"folded": 2}
    assert "Transpose(%rgb)" not in text(graph) and "Transpose(%depth)" not in text(graph)
    stem = next(n for n in graph.nodes if n.name == "stem3x3")
    assert stem.attrs[CHANNELS_FIRST_INPUT] and stem.inputs[0].name == "rgb"
    graph.verify()


def test_an_image_read_twice_keeps_its_copy():
    graph, did = _optimised(stems(shared=True))
    assert did == {"folded": 1}  # the two-channel map's
    assert "Transpose(%rgb)" in text(graph)
    graph.verify()


def test_numerics(target, tmp_path):
    report = check_model(stems(), {"rgb": rand(N, 3, H, W), "depth": rand(N, 2, H, W, seed=1)}, target, tmp_path)
    did = next(p for p in report["passes"] if p["pass"] == "fold_layout_transposes")
    assert did["folded"] >= 1 or target.startswith("cortex")
