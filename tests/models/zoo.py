"""The nine light zoo models bundled in the onnx wheel, as shipped and with random weights.

As shipped, every weight is a ConstantOfShape fill (0.02), so outputs are nearly constant. The random
variant replaces each such fill with seeded random values scaled by the role of its consumer (He-scaled
conv/gemm weights, BatchNorm variances near 1, small biases) and exposes the Softmax input (the logits)
as an extra output, since a saturated Softmax proves little.
"""

from __future__ import annotations

import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
MODELS = ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50", "shufflenet",
          "squeezenet", "vgg19", "zfnet512"]
# onnx's backend runner tolerances for these models (onnx/backend/test/case/model/__init__.py)
SHIPPED_RTOL = {"densenet121": 2e-3}
SHIPPED_ATOL = 1e-7


def model_path(name: str) -> str:
    return os.path.join(LIGHT_DIR, f"light_{name}.onnx")


def shipped_input(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """What onnx's backend runner feeds: arange(n)/n in the input's shape."""
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for x in model.graph.input:
        if x.name in inits:
            continue
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
        n = int(np.prod(shape))
        feeds[x.name] = (np.arange(n).reshape(shape) / n).astype(np.float32)
    return feeds


def shipped_expected(name: str, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    tensor = onnx.TensorProto()
    with open(os.path.join(LIGHT_DIR, f"light_{name}_output_0.pb"), "rb") as f:
        tensor.ParseFromString(f.read())
    return {model.graph.output[0].name: numpy_helper.to_array(tensor)}


def _consumers(model: onnx.ModelProto) -> dict[str, list[tuple[onnx.NodeProto, int]]]:
    uses: dict[str, list] = {}
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            uses.setdefault(name, []).append((node, i))
    return uses


def _random_weight(rng, shape, uses, all_uses) -> np.ndarray:
    node, index = uses[0]
    if node.op_type == "Unsqueeze":  # per-channel scale/shift reshaped for a Mul or an Add
        follow = all_uses.get(node.output[0], [(node, 0)])
        node, index = follow[0]
        if node.op_type == "Mul":
            return rng.uniform(0.5, 1.0, shape).astype(np.float32)
        return (0.05 * rng.standard_normal(shape)).astype(np.float32)
    if node.op_type in ("Conv", "Gemm") and index == 1:
        trans_b = any(a.name == "transB" and a.i for a in node.attribute)
        fan_in = int(np.prod(shape[1:])) if node.op_type == "Conv" else (shape[1] if trans_b else shape[0])
        return (rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))).astype(np.float32)
    if node.op_type == "BatchNormalization":
        if index == 1:  # scale
            return rng.uniform(0.5, 1.0, shape).astype(np.float32)
        if index == 4:  # variance
            return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    return (0.05 * rng.standard_normal(shape)).astype(np.float32)  # biases, shifts, means


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> tuple[onnx.ModelProto, list[str]]:
    """The model with seeded random weights in place of ConstantOfShape fills, and the logits exposed.

    Returns the model and the names of the outputs to compare (logits first, then the model's output)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    model.ir_version = max(model.ir_version, 4)  # IR 3 would require each new initializer to be an input
    rng = np.random.default_rng(seed)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    all_uses = _consumers(model)
    kept = []
    for node in model.graph.node:
        uses = all_uses.get(node.output[0], [])
        if node.op_type == "ConstantOfShape" and node.input[0] in inits and uses and uses[0][0].op_type != "Reshape":
            shape = tuple(int(d) for d in inits[node.input[0]])
            model.graph.initializer.append(numpy_helper.from_array(_random_weight(rng, shape, uses, all_uses), node.output[0]))
        else:
            kept.append(node)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    names = [o.name for o in model.graph.output]
    softmax = [n for n in model.graph.node if n.op_type == "Softmax"]
    if softmax:
        logits = softmax[-1].input[0]
        shape = next(o for o in model.graph.output).type.tensor_type.shape  # Softmax keeps its input's shape
        model.graph.output.insert(0, helper.make_tensor_value_info(logits, onnx.TensorProto.FLOAT, [d.dim_value for d in shape.dim]))
        names.insert(0, logits)
    return model, names
