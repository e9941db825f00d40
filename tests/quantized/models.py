"""Small float models and their int8 forms as onnxruntime.quantization makes them (QDQ and QOperator static,
per tensor and per channel, uint8 and int8 activations; dynamic), for the quantized-model tests.

Each float model is made with onnx.helper from seeded random weights; calibration data is a few seeded
batches. `quantized(name, form, opset)` returns (model, feeds), cached per process.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _weights(rng, *shape, scale=None):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return (rng.standard_normal(shape) * (scale or 1.0 / np.sqrt(fan_in))).astype(np.float32)


def _model(nodes, inputs, outputs, inits, opset):
    graph = helper.make_graph(nodes, "g", inputs, outputs, [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 21 else 10
    return onnx.shape_inference.infer_shapes(model)


def convnet(opset: int) -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """3x3 convolutions with ReLU and ReLU6, a strided one, a 1x1 with a residual Add, max and average
    pooling, a depthwise convolution, a Concat and a classifier Gemm."""
    rng = np.random.default_rng(1)
    w = {"w1": _weights(rng, 8, 3, 3, 3), "b1": _weights(rng, 8, scale=0.1),
         "w2": _weights(rng, 16, 8, 3, 3), "b2": _weights(rng, 16, scale=0.1),
         "w3": _weights(rng, 16, 16, 1, 1), "b3": _weights(rng, 16, scale=0.1),
         "wd": _weights(rng, 16, 1, 3, 3), "bd": _weights(rng, 16, scale=0.1),
         "wf": _weights(rng, 10, 32), "bf": _weights(rng, 10, scale=0.1),
         "lo": np.float32(0.0), "hi": np.float32(6.0)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv2"),
        helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"], name="relu6"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], name="conv3"),
        helper.make_node("Add", ["c3", "r2"], ["s3"], name="residual"),
        helper.make_node("MaxPool", ["s3"], ["p3"], kernel_shape=[2, 2], strides=[2, 2], name="maxpool"),
        helper.make_node("Conv", ["p3", "wd", "bd"], ["cd"], pads=[1, 1, 1, 1], group=16, name="depthwise"),
        helper.make_node("Relu", ["cd"], ["rd"], name="relu_dw"),
        helper.make_node("AveragePool", ["rd"], ["ap"], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], name="avgpool"),
        helper.make_node("Concat", ["ap", "p3"], ["cat"], axis=1, name="concat"),
        helper.make_node("GlobalAveragePool", ["cat"], ["gp"], name="gap"),
        helper.make_node("Flatten", ["gp"], ["fl"], name="flatten"),
        helper.make_node("Gemm", ["fl", "wf", "bf"], ["y"], transB=1, name="fc"),
    ]
    shape = (1, 3, 16, 16)
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 10))], w, opset), shape


def mlp(opset: int) -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """MatMul + Add layers with ReLU, LeakyReLU and Sigmoid, an elementwise Mul and a Softmax head."""
    rng = np.random.default_rng(2)
    w = {"w1": _weights(rng, 32, 64), "b1": _weights(rng, 64, scale=0.1), "w2": _weights(rng, 64, 48),
         "b2": _weights(rng, 48, scale=0.1), "w3": _weights(rng, 48, 48), "w4": _weights(rng, 48, 12)}
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
        helper.make_node("Add", ["m1", "b1"], ["a1"], name="fc1_bias"),
        helper.make_node("Relu", ["a1"], ["r1"], name="relu"),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"], name="fc2"),
        helper.make_node("Add", ["m2", "b2"], ["a2"], name="fc2_bias"),
        helper.make_node("LeakyRelu", ["a2"], ["l2"], alpha=0.1, name="leaky"),
        helper.make_node("MatMul", ["l2", "w3"], ["m3"], name="gate"),
        helper.make_node("Sigmoid", ["m3"], ["g3"], name="sigmoid"),
        helper.make_node("Mul", ["l2", "g3"], ["h3"], name="gated"),
        helper.make_node("MatMul", ["h3", "w4"], ["m4"], name="head"),
        helper.make_node("Softmax", ["m4"], ["y"], axis=-1, name="softmax"),
    ]
    shape = (4, 32)
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, (4, 12))], w, opset), shape


def attention(opset: int) -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """One head of self-attention over 8 tokens of 16 features, with a residual Add (activation x
    activation MatMuls, a Softmax and a Transpose between quantized ops)."""
    rng = np.random.default_rng(3)
    d = 16
    w = {f"w{n}": _weights(rng, d, d) for n in "qkvo"}
    w["scale"] = np.float32(1.0 / np.sqrt(d))
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["x", "wk"], ["k"], name="k"),
        helper.make_node("MatMul", ["x", "wv"], ["v"], name="v"),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="kt"),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Mul", ["s", "scale"], ["ss"], name="scaled"),
        helper.make_node("Softmax", ["ss"], ["p"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["p", "v"], ["o"], name="context"),
        helper.make_node("MatMul", ["o", "wo"], ["proj"], name="proj"),
        helper.make_node("Add", ["proj", "x"], ["y"], name="residual"),
    ]
    shape = (1, 8, d)
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], w, opset), shape


def features(opset: int) -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """Convolutions only, the output a feature map (512 values: the share of bit-exact elements means
    something): 3x3 with ReLU over 20 channels (k 180, not a multiple of any vector), a strided 5x5 with
    asymmetric padding, depthwise 3x3 at stride 1 and 2, a grouped 1x1 (4 groups of 6 channels), an unfolded
    BatchNormalization and ShuffleNet's channel shuffle (Reshape, Transpose, Reshape), and a 1x3."""
    rng = np.random.default_rng(4)
    w = {"w1": _weights(rng, 20, 3, 3, 3), "b1": _weights(rng, 20, scale=0.1),
         "w2": _weights(rng, 24, 20, 3, 3), "b2": _weights(rng, 24, scale=0.1),
         "w3": _weights(rng, 24, 24, 5, 5), "b3": _weights(rng, 24, scale=0.1),
         "w4": _weights(rng, 24, 1, 3, 3), "w6": _weights(rng, 24, 1, 3, 3), "w5": _weights(rng, 32, 24, 1, 3), "b5": _weights(rng, 32, scale=0.1),
         "wg": _weights(rng, 24, 6, 1, 1), "bg": _weights(rng, 24, scale=0.1),
         "gamma": rng.uniform(0.5, 1.5, 24).astype(np.float32), "beta": _weights(rng, 24, scale=0.2),
         "mean": _weights(rng, 24, scale=0.2), "var": rng.uniform(0.5, 2.0, 24).astype(np.float32),
         "split": np.array([1, 4, 6, 4, 4], np.int64), "merge": np.array([1, 24, 4, 4], np.int64)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w3", "b3"], ["c3"], pads=[1, 2, 2, 1], strides=[2, 2], name="conv3"),
        helper.make_node("Conv", ["c3", "w4"], ["c4"], pads=[1, 1, 1, 1], group=24, name="depthwise"),
        helper.make_node("Conv", ["c4", "w6"], ["c6"], pads=[1, 1, 1, 1], strides=[2, 2], group=24, name="depthwise_s2"),
        helper.make_node("Conv", ["c6", "wg", "bg"], ["cg"], group=4, name="grouped"),
        helper.make_node("BatchNormalization", ["cg", "gamma", "beta", "mean", "var"], ["bg_"], name="bn_grouped"),
        helper.make_node("Relu", ["bg_"], ["rg"], name="relu_grouped"),
        helper.make_node("Reshape", ["rg", "split"], ["parts"], name="shuffle_split"),
        helper.make_node("Transpose", ["parts"], ["swapped"], perm=[0, 2, 1, 3, 4], name="shuffle"),
        helper.make_node("Reshape", ["swapped", "merge"], ["shuffled"], name="shuffle_merge"),
        helper.make_node("Conv", ["shuffled", "w5", "b5"], ["y"], pads=[0, 1, 0, 1], name="conv1x3"),
    ]
    shape = (1, 3, 15, 15)
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 32, 4, 4))], w, opset), shape


def mobile(opset: int) -> tuple[onnx.ModelProto, tuple[int, ...]]:
    """A MobileNetV3 / EfficientNet-style block: SiLU (Sigmoid, then a Mul of two activations), a depthwise
    convolution and a BatchNormalization not folded into it (quantized as an island of its own),
    squeeze-and-excitation (GlobalAveragePool, two 1x1 convolutions, Sigmoid, a Mul broadcasting [1, C, 1, 1]
    over the map), a 1x1 projection and an AveragePool; the output a feature map."""
    rng = np.random.default_rng(5)
    w = {"w1": _weights(rng, 16, 3, 3, 3), "b1": _weights(rng, 16, scale=0.1),
         "wd": _weights(rng, 16, 1, 3, 3), "bd": _weights(rng, 16, scale=0.1),
         "ws": _weights(rng, 4, 16, 1, 1), "bs": _weights(rng, 4, scale=0.1),
         "we": _weights(rng, 16, 4, 1, 1), "be": _weights(rng, 16, scale=0.1),
         "wp": _weights(rng, 8, 16, 1, 1), "bp": _weights(rng, 8, scale=0.1),
         "gamma": rng.uniform(0.3, 2.0, 16).astype(np.float32) * np.sign(rng.standard_normal(16)).astype(np.float32),
         "beta": _weights(rng, 16, scale=0.2), "mean": _weights(rng, 16, scale=0.2),
         "var": rng.uniform(0.5, 2.0, 16).astype(np.float32)}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Sigmoid", ["c1"], ["g1"], name="silu_gate"),
        helper.make_node("Mul", ["c1", "g1"], ["s1"], name="silu"),
        helper.make_node("Conv", ["s1", "wd", "bd"], ["cd"], pads=[1, 1, 1, 1], group=16, name="depthwise"),
        helper.make_node("BatchNormalization", ["cd", "gamma", "beta", "mean", "var"], ["bn"], name="bn_dw"),
        helper.make_node("Relu", ["bn"], ["rd"], name="relu_dw"),
        helper.make_node("GlobalAveragePool", ["rd"], ["sq"], name="squeeze"),
        helper.make_node("Conv", ["sq", "ws", "bs"], ["e1"], name="reduce"),
        helper.make_node("Relu", ["e1"], ["e2"], name="relu_se"),
        helper.make_node("Conv", ["e2", "we", "be"], ["e3"], name="expand"),
        helper.make_node("Sigmoid", ["e3"], ["e4"], name="excite_gate"),
        helper.make_node("Mul", ["rd", "e4"], ["ex"], name="excite"),
        helper.make_node("Conv", ["ex", "wp", "bp"], ["pr"], name="project"),
        helper.make_node("AveragePool", ["pr"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="avgpool"),
    ]
    shape = (1, 3, 16, 16)
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, 8, 8, 8))], w, opset), shape


FLOAT_MODELS = {"convnet": convnet, "features": features, "mlp": mlp, "attention": attention, "mobile": mobile}

# form -> quantize_static / quantize_dynamic keyword arguments
FORMS = {
    "qdq_u8_tensor": dict(format="QDQ", activation="QUInt8", per_channel=False),
    "qdq_u8_channel": dict(format="QDQ", activation="QUInt8", per_channel=True),
    "qdq_s8_channel": dict(format="QDQ", activation="QInt8", per_channel=True),
    "qop_u8_channel": dict(format="QOperator", activation="QUInt8", per_channel=True),
    "qop_s8_tensor": dict(format="QOperator", activation="QInt8", per_channel=False),
    "dynamic": dict(format="dynamic", per_channel=False),
    "dynamic_channel": dict(format="dynamic", per_channel=True),
}


def feeds(shape: tuple[int, ...], seed: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}


@functools.lru_cache(maxsize=None)
def quantized(name: str, form: str, opset: int) -> onnx.ModelProto:
    from onnxruntime import quantization as q

    model, shape = FLOAT_MODELS[name](opset)
    spec = FORMS[form]
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "f.onnx", Path(tmp) / "q.onnx"
        onnx.save(model, str(src))
        if spec["format"] == "dynamic":
            q.quantize_dynamic(str(src), str(dst), per_channel=spec["per_channel"], weight_type=q.QuantType.QInt8)
        else:
            class Reader(q.CalibrationDataReader):
                def __init__(self):
                    self.batches = iter([feeds(shape, seed) for seed in range(8)])

                def get_next(self):
                    return next(self.batches, None)

            q.quantize_static(str(src), str(dst), Reader(), quant_format=getattr(q.QuantFormat, spec["format"]),
                              per_channel=spec["per_channel"], activation_type=getattr(q.QuantType, spec["activation"]),
                              weight_type=q.QuantType.QInt8)
        return onnx.load(str(dst))


def input_shape(name: str) -> tuple[int, ...]:
    return FLOAT_MODELS[name](17)[1]
