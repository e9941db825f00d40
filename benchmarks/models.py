"""The benchmark suite's models, built here with onnx.helper and seeded random weights (nothing downloaded).

Each builder returns an onnx.ModelProto (opset 17, batch 1). Convolutions carry their bias with BatchNorm
folded in, as deployed models do; weights are He-scaled so activations stay in range.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Net:
    """A graph under construction: each method adds nodes and returns the name of its output."""

    def __init__(self, name: str, seed: int = 0):
        self.name, self.rng = name, np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def _fresh(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, array: np.ndarray, hint: str = "w") -> str:
        name = self._fresh(hint)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs) -> str:
        out = self._fresh(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def weight(self, shape: tuple[int, ...], fan_in: int) -> str:
        return self.const((self.rng.standard_normal(shape) * math.sqrt(2.0 / fan_in)).astype(np.float32))

    def bias(self, n: int) -> str:
        return self.const((0.05 * self.rng.standard_normal(n)).astype(np.float32), "b")

    def conv(self, x: str, cin: int, cout: int, k: int | tuple[int, int], stride: int = 1, group: int = 1,
             act: str | None = "relu") -> str:
        kh, kw = (k, k) if isinstance(k, int) else k
        pads = [(kh - 1) // 2, (kw - 1) // 2, kh // 2, kw // 2]
        w = self.weight((cout, cin // group, kh, kw), cin // group * kh * kw)
        y = self.op("Conv", [x, w, self.bias(cout)], "conv", kernel_shape=[kh, kw], strides=[stride, stride],
                    pads=pads, group=group)
        return self.act(y, act)

    def act(self, x: str, act: str | None) -> str:
        if act == "relu":
            return self.op("Relu", [x])
        if act == "relu6":
            return self.op("Clip", [x, self.const(np.float32(0), "lo"), self.const(np.float32(6), "hi")], "relu6")
        return x

    def dense(self, x: str, n_in: int, n_out: int, act: str | None = None) -> str:
        y = self.op("Gemm", [x, self.weight((n_out, n_in), n_in), self.bias(n_out)], "fc", transB=1)
        return self.act(y, act)

    def head(self, x: str, channels: int, classes: int) -> str:
        """Global average pool, flatten, a fully-connected layer to the logits."""
        pooled = self.op("Flatten", [self.op("GlobalAveragePool", [x], "gap")], axis=1)
        return self.dense(pooled, channels, classes)

    def model(self, inputs: list[tuple[str, int, list[int]]], outputs: list[str]) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                                  [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs],
                                  self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="mlcc-benchmarks")
        model.ir_version = 8
        return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def _image(net: Net, channels: int, size: int | tuple[int, int]) -> tuple[str, list]:
    h, w = (size, size) if isinstance(size, int) else size
    return "input", [("input", TensorProto.FLOAT, [1, channels, h, w])]


def mobilenet_v2() -> onnx.ModelProto:
    """MobileNetV2 1.0 at 224x224 (inverted residuals, ReLU6), 1000 classes."""
    net = Net("mobilenet_v2", seed=1)
    x, inputs = _image(net, 3, 224)
    x = net.conv(x, 3, 32, 3, 2, act="relu6")
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = net.conv(x, cin, hidden, 1, act="relu6") if t != 1 else x
            y = net.conv(y, hidden, hidden, 3, stride, group=hidden, act="relu6")
            y = net.conv(y, hidden, c, 1, act=None)
            x = net.op("Add", [x, y], "residual") if stride == 1 and cin == c else y
            cin = c
    x = net.conv(x, cin, 1280, 1, act="relu6")
    return net.model(inputs, [net.head(x, 1280, 1000)])


def ds_cnn_kws() -> onnx.ModelProto:
    """MLPerf Tiny keyword spotting DS-CNN: 1x1x49x10 MFCCs, 64 channels, 4 depthwise-separable blocks, 12 classes."""
    net = Net("ds_cnn_kws", seed=2)
    x, inputs = _image(net, 1, (49, 10))
    x = net.conv(x, 1, 64, (10, 4), 2)
    for _ in range(4):
        x = net.conv(x, 64, 64, 3, group=64)
        x = net.conv(x, 64, 64, 1)
    return net.model(inputs, [net.head(x, 64, 12)])


def resnet8() -> onnx.ModelProto:
    """MLPerf Tiny image classification ResNet-8: 1x3x32x32, stacks of 16/32/64 channels, 10 classes."""
    net = Net("resnet8", seed=3)
    x, inputs = _image(net, 3, 32)
    x = net.conv(x, 3, 16, 3)
    cin = 16
    for cout, stride in [(16, 1), (32, 2), (64, 2)]:
        y = net.conv(x, cin, cout, 3, stride)
        y = net.conv(y, cout, cout, 3, act=None)
        shortcut = x if stride == 1 and cin == cout else net.conv(x, cin, cout, 1, stride, act=None)
        x = net.op("Relu", [net.op("Add", [shortcut, y], "residual")])
        cin = cout
    return net.model(inputs, [net.head(x, 64, 10)])


def mobilenet_v1_025_vww() -> onnx.ModelProto:
    """MLPerf Tiny visual wake words: MobileNetV1 width 0.25 at 1x3x96x96, 2 classes."""
    net = Net("mobilenet_v1_025_vww", seed=4)
    x, inputs = _image(net, 3, 96)
    x = net.conv(x, 3, 8, 3, 2)
    cin = 8
    for c, s in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5, (1024, 2), (1024, 1)]:
        c //= 4
        x = net.conv(x, cin, cin, 3, s, group=cin)
        x = net.conv(x, cin, c, 1)
        cin = c
    return net.model(inputs, [net.head(x, cin, 2)])


def fc_autoencoder() -> onnx.ModelProto:
    """MLPerf Tiny anomaly detection: a fully-connected autoencoder 640-128x4-8-128x4-640 on 1x640."""
    net = Net("fc_autoencoder", seed=5)
    x, width = "input", 640
    for n in [128, 128, 128, 128, 8, 128, 128, 128, 128]:
        x, width = net.dense(x, width, n, "relu"), n
    return net.model([("input", TensorProto.FLOAT, [1, 640])], [net.dense(x, width, 640)])


def mlp() -> onnx.ModelProto:
    """A 3-layer perceptron 784-1024-1024-10 with ReLU, batch 1."""
    net = Net("mlp", seed=6)
    x = net.dense("input", 784, 1024, "relu")
    x = net.dense(x, 1024, 1024, "relu")
    return net.model([("input", TensorProto.FLOAT, [1, 784])], [net.dense(x, 1024, 10)])


def bert_encoder(layers: int = 6, hidden: int = 384, seq: int = 128, heads: int = 12, ffn: int = 1536) -> onnx.ModelProto:
    """A BERT-like encoder on 1 x seq x hidden embeddings: self-attention and a GELU (erf) FFN per layer,
    post-LayerNorm residuals."""
    net = Net("bert_encoder", seed=7)
    head_dim = hidden // heads
    split = net.const(np.array([1, seq, heads, head_dim], dtype=np.int64), "shape")
    merged = net.const(np.array([1, seq, hidden], dtype=np.int64), "shape")
    scale = net.const(np.float32(1 / math.sqrt(head_dim)), "scale")

    def linear(x, n_in, n_out):
        return net.op("Add", [net.op("MatMul", [x, net.weight((n_in, n_out), n_in)]), net.bias(n_out)], "linear")

    def layer_norm(x):
        gamma = net.const(net.rng.uniform(0.8, 1.2, hidden).astype(np.float32), "gamma")
        return net.op("LayerNormalization", [x, gamma, net.bias(hidden)], "ln", axis=-1, epsilon=1e-12)

    def heads_of(x, perm):
        return net.op("Transpose", [net.op("Reshape", [x, split])], perm=perm)

    x = "input"
    for _ in range(layers):
        q = heads_of(linear(x, hidden, hidden), [0, 2, 1, 3])
        k = heads_of(linear(x, hidden, hidden), [0, 2, 3, 1])
        v = heads_of(linear(x, hidden, hidden), [0, 2, 1, 3])
        scores = net.op("Mul", [net.op("MatMul", [q, k], "scores"), scale])
        context = net.op("MatMul", [net.op("Softmax", [scores], axis=-1), v], "context")
        context = net.op("Reshape", [net.op("Transpose", [context], perm=[0, 2, 1, 3]), merged])
        x = layer_norm(net.op("Add", [x, linear(context, hidden, hidden)], "residual"))
        h = linear(x, hidden, ffn)
        erf = net.op("Erf", [net.op("Mul", [h, net.const(np.float32(1 / math.sqrt(2)), "c")])])
        gelu = net.op("Mul", [h, net.op("Mul", [net.op("Add", [erf, net.const(np.float32(1), "one")]),
                                                 net.const(np.float32(0.5), "half")])], "gelu")
        x = layer_norm(net.op("Add", [x, linear(gelu, ffn, hidden)], "residual"))
    return net.model([("input", TensorProto.FLOAT, [1, seq, hidden])], [x])


def gemm_1024() -> onnx.ModelProto:
    """One f32 GEMM 1024x1024x1024 (the input times a constant matrix): the kernel's achieved rate."""
    net = Net("gemm_1024", seed=8)
    y = net.op("MatMul", ["input", net.weight((1024, 1024), 1024)])
    return net.model([("input", TensorProto.FLOAT, [1024, 1024])], [y])


def zoo(name: str) -> Callable[[], onnx.ModelProto]:
    def build() -> onnx.ModelProto:
        from tests.models import zoo as tests_zoo

        model, _ = tests_zoo.with_random_weights(onnx.load(tests_zoo.model_path(name)))
        # IR 3 listed every initializer as a graph input too, which stops onnxruntime from folding them
        weights = {i.name for i in model.graph.initializer}
        inputs = [x for x in model.graph.input if x.name not in weights]
        del model.graph.input[:]
        model.graph.input.extend(inputs)
        return model
    build.__doc__ = (f"onnx's light {name} topology with seeded random weights (tests/models/zoo.py), "
                     "initializers no longer listed as inputs.")
    return build


def _zoo_names() -> list[str]:
    from tests.models import zoo as tests_zoo

    return list(tests_zoo.MODELS)


SUITE: dict[str, Callable[[], onnx.ModelProto]] = {
    "mlp": mlp,
    "fc_autoencoder": fc_autoencoder,
    "ds_cnn_kws": ds_cnn_kws,
    "resnet8": resnet8,
    "mobilenet_v1_025_vww": mobilenet_v1_025_vww,
    "mobilenet_v2": mobilenet_v2,
    "bert_encoder": bert_encoder,
    "gemm_1024": gemm_1024,  # the kernel's rate, left out of the geometric means
    **{name: zoo(name) for name in sorted(_zoo_names(), key=lambda n: n == "vgg19")},  # the largest last
}
# The small models of --quick: seconds, not minutes.
QUICK = ["mlp", "fc_autoencoder", "ds_cnn_kws", "resnet8", "mobilenet_v1_025_vww"]
