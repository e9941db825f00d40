"""Regenerate the bundled sample models (deterministic: same bytes every run).

    python samples/make_samples.py

digits_cnn.onnx: a small MNIST-shaped CNN (1x1x28x28 -> 10 class probabilities) with seeded random
weights: Conv-Relu-MaxPool twice, Flatten, Gemm, Softmax. Small enough to commit, big enough to use
the main kernels.

digits_calibration.npz: 32 seeded 28x28 images of pen strokes (three thick line segments each, values in
[0, 1]) stacked along the batch axis, as `mlcc quantize samples/digits_cnn.onnx --calibration ...` reads
them: the calibration data of the README's int8 example.
"""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = Path(__file__).resolve().parent


def _he(rng, shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


def digits_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(2026)
    weights = {
        "conv1.weight": _he(rng, (8, 1, 3, 3), 9), "conv1.bias": np.zeros(8, np.float32) + 0.01,
        "conv2.weight": _he(rng, (16, 8, 3, 3), 72), "conv2.bias": np.zeros(16, np.float32) + 0.01,
        "fc.weight": _he(rng, (10, 784), 784), "fc.bias": np.zeros(10, np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p2"], name="pool2", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 28, 28])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        [numpy_helper.from_array(v, k) for k, v in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="mlcc samples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def digits_calibration(count: int = 32) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(28)
    rows, cols = np.mgrid[0:28, 0:28].astype(np.float32)
    images = np.zeros((count, 1, 28, 28), np.float32)
    for image in images:
        for _ in range(3):
            (r0, c0), (r1, c1) = rng.uniform(4, 24, (2, 2))
            t = np.clip(((rows - r0) * (r1 - r0) + (cols - c0) * (c1 - c0)) / max((r1 - r0) ** 2 + (c1 - c0) ** 2, 1e-6), 0, 1)
            distance = np.hypot(rows - (r0 + t * (r1 - r0)), cols - (c0 + t * (c1 - c0)))
            image[0] = np.maximum(image[0], np.clip(2.0 - distance, 0, 1))  # a stroke about 3 pixels wide
    return {"image": np.round(images * 255) / 255}  # 8-bit grey levels, as a scanned digit has


if __name__ == "__main__":
    onnx.save(digits_cnn(), str(HERE / "digits_cnn.onnx"))
    np.savez_compressed(HERE / "digits_calibration.npz", **digits_calibration())
    print("wrote", HERE / "digits_cnn.onnx", "and", HERE / "digits_calibration.npz")
