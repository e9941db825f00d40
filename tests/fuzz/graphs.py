"""Seeded random valid ONNX graphs for differential testing (mlcc vs onnxruntime).

`random_model(seed)` returns `(model, feeds)`: the same seed always gives the same model and inputs.
A graph chains 1-8 float32 nodes drawn from OP_BUILDERS; each builder looks at the current tensor's shape,
draws legal attributes and constants, and adds one node (sometimes with a second operand: a constant, a new
graph input or an earlier tensor). Output shapes come from onnx's own strict shape inference, so a builder
never has to restate an op's shape rules; a node whose output would exceed MAX_ELEMENTS is dropped and
another op drawn. Weights are initializers scaled by 1/sqrt(fan-in) so values stay near unit size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MAX_ELEMENTS = 20_000
MAX_NODES = 8
OPSETS = (17, 18, 20)


class Skip(Exception):
    """This op does not fit the current tensor; draw another."""


@dataclass
class Builder:
    rng: np.random.Generator
    opset: int
    nodes: list = field(default_factory=list)
    initializers: list = field(default_factory=list)
    inputs: list = field(default_factory=list)  # ValueInfoProto
    feeds: dict = field(default_factory=dict)
    shapes: dict = field(default_factory=dict)  # tensor name -> shape, for every tensor made so far
    counter: int = 0

    # --- values -------------------------------------------------------------------------------
    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}{self.counter}"

    def const(self, array, stem: str = "w") -> str:
        name = self.fresh(stem)
        array = np.asarray(array)
        self.initializers.append(numpy_helper.from_array(array, name))
        self.shapes[name] = tuple(array.shape)
        return name

    def weights(self, shape, fan_in: int) -> str:
        return self.const((self.rng.standard_normal(shape) / math.sqrt(max(fan_in, 1))).astype(np.float32))

    def ints(self, values, stem: str = "i") -> str:
        return self.const(np.asarray(values, dtype=np.int64), stem)

    def graph_input(self, shape, low: float | None = None) -> str:
        name = self.fresh("x")
        data = np.asarray(self.rng.uniform(low, 2.0, shape) * self.rng.choice([-1, 1], shape) if low is not None
                          else self.rng.standard_normal(shape), dtype=np.float32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = data
        self.shapes[name] = tuple(shape)
        return name

    def operand(self, shape, nonzero: bool = False) -> str:
        """A second float operand of `shape`: a constant, a new graph input or an earlier tensor of that shape."""
        earlier = [n for n, s in self.shapes.items() if s == tuple(shape) and n in self.float_tensors()]
        choice = self.rng.integers(3)
        if choice == 2 and earlier and not nonzero:
            return earlier[self.rng.integers(len(earlier))]
        if choice == 1:
            return self.graph_input(shape, low=0.5 if nonzero else None)
        if nonzero:
            return self.const((self.rng.uniform(0.5, 2.0, shape) * self.rng.choice([-1, 1], shape)).astype(np.float32))
        return self.const(self.rng.standard_normal(shape).astype(np.float32))

    def float_tensors(self) -> set[str]:
        ints = {init.name for init in self.initializers if init.data_type != TensorProto.FLOAT}
        return set(self.shapes) - ints

    def mark(self) -> tuple:
        return len(self.nodes), len(self.initializers), len(self.inputs), dict(self.shapes), dict(self.feeds)

    def rollback(self, mark: tuple) -> None:
        nodes, inits, inputs, self.shapes, self.feeds = mark
        del self.nodes[nodes:], self.initializers[inits:], self.inputs[inputs:]

    # --- nodes --------------------------------------------------------------------------------
    def add(self, op: str, inputs: list[str], **attrs) -> str:
        """Add one node; its output's shape comes from strict onnx shape inference."""
        out = self.fresh("t")
        node = helper.make_node(op, inputs, [out], name=f"{op.lower()}_{self.counter}", **attrs)
        self.nodes.append(node)
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model([out]), strict_mode=True)
        except Exception as exc:  # an illegal draw by a builder: drop it
            self.nodes.pop()
            raise Skip(f"{op}: {exc}") from None
        info = {v.name: v for v in inferred.graph.output}[out]
        dims = info.type.tensor_type.shape.dim
        shape = tuple(d.dim_value if d.HasField("dim_value") else -1 for d in dims)
        if not info.type.tensor_type.HasField("shape") or any(d <= 0 for d in shape) or math.prod(shape) >= MAX_ELEMENTS:
            self.nodes.pop()
            raise Skip(f"{op}: output shape {shape}")
        self.shapes[out] = shape
        return out

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        graph_outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs]
        graph = helper.make_graph(self.nodes, "fuzz", self.inputs, graph_outputs, self.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8 if self.opset < 19 else 9
        return model


# --- helpers for builders ---------------------------------------------------------------------

def _pick(rng, options):
    return options[rng.integers(len(options))]


def _axis(rng, rank: int, negative: bool = True) -> int:
    axis = int(rng.integers(rank))
    return axis - rank if negative and rng.random() < 0.3 else axis


def _rank(b: Builder, x: str, least: int = 1) -> int:
    rank = len(b.shapes[x])
    if rank < least:
        raise Skip(f"needs rank >= {least}")
    return rank


def _window_fits(b: Builder, x: str, attrs: dict) -> None:
    """Skip windows wider than the (explicitly) padded input: legal to write, but no real model has them."""
    spatial = b.shapes[x][2:]
    k = len(spatial)
    pads = attrs.get("pads", [0] * 2 * k)
    for i, size in enumerate(spatial):
        extent = (attrs["kernel_shape"][i] - 1) * attrs.get("dilations", [1] * k)[i] + 1
        if extent > size + pads[i] + pads[i + k]:
            raise Skip("window wider than the padded input")


def _ceil_windows_agree(b: Builder, x: str, attrs: dict) -> None:
    """Skip ceil_mode pools whose last window would start in the right padding: onnxruntime (and later onnx
    specs) drop that window but onnx 1.x shape inference keeps it, so later shapes would be drawn wrong."""
    if not attrs.get("ceil_mode") or "auto_pad" in attrs:
        return
    spatial = b.shapes[x][2:]
    k = len(spatial)
    for i, size in enumerate(spatial):
        extent = (attrs["kernel_shape"][i] - 1) * attrs.get("dilations", [1] * k)[i] + 1
        padded = size + attrs["pads"][i] + attrs["pads"][i + k]
        stride = attrs["strides"][i]
        windows = -(-(padded - extent) // stride) + 1
        if (windows - 1) * stride >= size + attrs["pads"][i]:
            raise Skip("ceil_mode window starting in the right padding")


def _spatial_rank(shape) -> int:
    if len(shape) not in (3, 4):
        raise Skip("needs N, C and 1-2 spatial dims")
    return len(shape) - 2


# --- op builders: (builder, x) -> new tensor name ----------------------------------------------

def conv(b: Builder, x: str) -> str:
    shape = b.shapes[x]
    k = _spatial_rank(shape)
    channels = shape[1]
    groups = int(_pick(b.rng, [g for g in range(1, channels + 1) if channels % g == 0]))
    if b.rng.random() < 0.3:
        groups = channels  # depthwise is common in real models
    out_channels = groups * int(b.rng.integers(1, max(2, 8 // groups + 1)))
    kernel = [int(b.rng.integers(1, 4)) for _ in range(k)]
    dilations = [int(b.rng.integers(1, 3)) for _ in range(k)]
    strides = [int(b.rng.integers(1, 4)) for _ in range(k)]
    attrs = dict(kernel_shape=kernel, strides=strides, dilations=dilations, group=groups)
    mode = b.rng.random()
    if mode < 0.15:
        attrs["auto_pad"] = str(_pick(b.rng, ["SAME_UPPER", "SAME_LOWER", "VALID"]))
        if attrs["auto_pad"] != "VALID":
            attrs["dilations"] = [1] * k  # onnxruntime refuses dilated SAME convolutions
    else:
        attrs["pads"] = [int(b.rng.integers(0, (kernel[i % k] - 1) * dilations[i % k] + 2)) for i in range(2 * k)]
    _window_fits(b, x, attrs)
    fan_in = channels // groups * math.prod(kernel)
    inputs = [x, b.weights((out_channels, channels // groups, *kernel), fan_in)]
    if b.rng.random() < 0.6:
        inputs.append(b.const((b.rng.standard_normal(out_channels) * 0.1).astype(np.float32)))
    return b.add("Conv", inputs, **attrs)


def conv_transpose(b: Builder, x: str) -> str:
    shape = b.shapes[x]
    k = _spatial_rank(shape)
    channels = shape[1]
    groups = int(_pick(b.rng, [1, 1, channels] if channels > 1 else [1]))
    out_per_group = int(b.rng.integers(1, 4))
    kernel = [int(b.rng.integers(1, 4)) for _ in range(k)]
    strides = [int(b.rng.integers(1, 3)) for _ in range(k)]
    attrs = dict(kernel_shape=kernel, strides=strides, group=groups,
                 pads=[int(b.rng.integers(0, kernel[i % k])) for i in range(2 * k)])
    if b.rng.random() < 0.3:
        attrs["output_padding"] = [int(b.rng.integers(0, s)) for s in strides]
    fan_in = channels // groups * math.prod(kernel)
    inputs = [x, b.weights((channels, out_per_group, *kernel), fan_in)]
    if b.rng.random() < 0.5:
        inputs.append(b.const((b.rng.standard_normal(out_per_group * groups) * 0.1).astype(np.float32)))
    return b.add("ConvTranspose", inputs, **attrs)


def matmul(b: Builder, x: str) -> str:
    shape = b.shapes[x]
    if len(shape) < 1 or len(shape) > 4:
        raise Skip("rank")
    kdim = shape[-1]
    n = int(b.rng.integers(1, 17))
    wshape = (kdim, n)
    if len(shape) >= 3 and b.rng.random() < 0.3:
        wshape = (*shape[-3:-2], kdim, n)  # batched right operand, broadcast over the leading dims
    w = b.weights(wshape, kdim) if b.rng.random() < 0.7 else b.graph_input(wshape)
    return b.add("MatMul", [x, w])


def gemm(b: Builder, x: str) -> str:
    if len(b.shapes[x]) > 2:
        x = b.add("Flatten", [x], axis=int(b.rng.integers(1, len(b.shapes[x]))))  # Gemm takes 2-D A
    shape = b.shapes[x]
    if len(shape) != 2:
        raise Skip("Gemm takes 2-D A")
    trans_a, trans_b = int(b.rng.integers(2)), int(b.rng.integers(2))
    m, kdim = (shape[1], shape[0]) if trans_a else shape
    n = int(b.rng.integers(1, 17))
    attrs = dict(transA=trans_a, transB=trans_b)
    if b.rng.random() < 0.5:
        attrs["alpha"] = float(np.float32(b.rng.uniform(-2, 2)))
    inputs = [x, b.weights((n, kdim) if trans_b else (kdim, n), kdim)]
    if b.rng.random() < 0.7:
        cshape = _pick(b.rng, [(n,), (1, n), (m, 1), (m, n), (), (1, 1)])
        inputs.append(b.const(b.rng.standard_normal(cshape).astype(np.float32)))
        if b.rng.random() < 0.5:
            attrs["beta"] = float(np.float32(b.rng.uniform(-2, 2)))
    return b.add("Gemm", inputs, **attrs)


def _broadcast_shape(b: Builder, shape) -> tuple:
    """A shape that broadcasts against `shape` (dims kept or set to 1, leading dims maybe dropped)."""
    dims = [d if b.rng.random() < 0.6 else 1 for d in shape]
    drop = int(b.rng.integers(0, len(dims) + 1)) if b.rng.random() < 0.4 else 0
    return tuple(dims[drop:])


def binary(op: str):
    def build(b: Builder, x: str) -> str:
        shape = b.shapes[x]
        other = b.operand(_broadcast_shape(b, shape), nonzero=op == "Div")
        inputs = [x, other] if op == "Div" or b.rng.random() < 0.5 else [other, x]
        return b.add(op, inputs)
    build.__name__ = op.lower()
    return build


def variadic(op: str):
    def build(b: Builder, x: str) -> str:
        count = int(b.rng.integers(1, 4))
        inputs = [x] + [b.operand(_broadcast_shape(b, b.shapes[x])) for _ in range(count - 1)]
        b.rng.shuffle(inputs)
        return b.add(op, [str(i) for i in inputs])
    build.__name__ = op.lower()
    return build


def _pool_attrs(b: Builder, k: int) -> dict:
    kernel = [int(b.rng.integers(1, 4)) for _ in range(k)]
    strides = [int(b.rng.integers(1, 4)) for _ in range(k)]
    attrs = dict(kernel_shape=kernel, strides=strides, ceil_mode=int(b.rng.random() < 0.3))
    if b.rng.random() < 0.15:
        # onnxruntime computes negative SAME pads (and fails) when a stride exceeds the kernel
        same = all(s <= k for s, k in zip(strides, kernel))
        attrs["auto_pad"] = str(_pick(b.rng, ["SAME_UPPER", "SAME_LOWER", "VALID"] if same else ["VALID"]))
        attrs["ceil_mode"] = 0  # onnx 1.x shape inference rounds auto_pad outputs up where onnxruntime does not
    else:
        attrs["pads"] = [int(b.rng.integers(0, kernel[i % k])) for i in range(2 * k)]  # pad < kernel
    return attrs


def max_pool(b: Builder, x: str) -> str:
    attrs = _pool_attrs(b, _spatial_rank(b.shapes[x]))
    if b.rng.random() < 0.3 and "auto_pad" not in attrs:
        attrs["dilations"] = [int(b.rng.integers(1, 3)) for _ in attrs["kernel_shape"]]
    _window_fits(b, x, attrs)
    _ceil_windows_agree(b, x, attrs)
    return b.add("MaxPool", [x], **attrs)


def average_pool(b: Builder, x: str) -> str:
    attrs = _pool_attrs(b, _spatial_rank(b.shapes[x]))
    attrs["count_include_pad"] = int(b.rng.integers(2))
    _window_fits(b, x, attrs)
    _ceil_windows_agree(b, x, attrs)
    return b.add("AveragePool", [x], **attrs)


def global_average_pool(b: Builder, x: str) -> str:
    _spatial_rank(b.shapes[x])
    return b.add("GlobalAveragePool", [x])


def reshape(b: Builder, x: str) -> str:
    shape = b.shapes[x]
    size = math.prod(shape)
    target = []
    rest = size
    for _ in range(int(b.rng.integers(1, 5)) - 1):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = int(_pick(b.rng, divisors))
        target.append(d)
        rest //= d
    target.append(rest)
    b.rng.shuffle(target)
    target = [int(t) for t in target]
    copies = [i for i, d in enumerate(target) if i < len(shape) and shape[i] == d]
    if copies and b.rng.random() < 0.4:
        target[_pick(b.rng, copies)] = 0  # 0 copies the input's dim
    if b.rng.random() < 0.4:
        target[int(b.rng.integers(len(target)))] = -1
    return b.add("Reshape", [x, b.ints(target)])


def flatten(b: Builder, x: str) -> str:
    rank = _rank(b, x)
    return b.add("Flatten", [x], axis=int(b.rng.integers(-rank, rank + 1)))


def transpose(b: Builder, x: str) -> str:
    rank = _rank(b, x)
    if b.rng.random() < 0.1:
        return b.add("Transpose", [x])  # default: reverse the dims
    return b.add("Transpose", [x], perm=[int(p) for p in b.rng.permutation(rank)])


def concat(b: Builder, x: str) -> str:
    _rank(b, x)
    shape = b.shapes[x]
    axis = _axis(b.rng, len(shape))
    inputs = [x]
    for _ in range(int(b.rng.integers(1, 3))):
        other = list(shape)
        other[axis] = int(b.rng.integers(1, 5))
        inputs.append(x if b.rng.random() < 0.2 else b.operand(other))
    b.rng.shuffle(inputs)
    return b.add("Concat", [str(i) for i in inputs], axis=axis)


def slice_(b: Builder, x: str) -> str:
    _rank(b, x)
    shape = b.shapes[x]
    axes = sorted(b.rng.choice(len(shape), size=int(b.rng.integers(1, len(shape) + 1)), replace=False).tolist())
    starts, ends, steps = [], [], []
    for a in axes:
        dim = shape[a]
        step = int(_pick(b.rng, [1, 1, 2, 3, -1, -2]))
        start = int(b.rng.integers(-dim - 2, dim + 2))
        end = int(b.rng.integers(-dim - 2, dim + 2))
        if b.rng.random() < 0.1:
            end = int(_pick(b.rng, [2**62, -(2**62)]))  # "to the end" as exporters write it
        if len(range(dim)[slice(start, end, step)]) == 0:
            start, end = (0, dim) if step > 0 else (dim - 1, -dim - 1)
        starts.append(start), ends.append(end), steps.append(step)
    axes = [a - len(shape) if b.rng.random() < 0.3 else a for a in axes]
    inputs = [x, b.ints(starts), b.ints(ends), b.ints(axes)]
    if b.rng.random() < 0.8 or any(s != 1 for s in steps):
        inputs.append(b.ints(steps))
    return b.add("Slice", inputs)


def pad(b: Builder, x: str) -> str:
    _rank(b, x)
    shape = b.shapes[x]
    mode = str(_pick(b.rng, ["constant", "reflect", "edge"]))
    limit = (lambda d: d - 1) if mode == "reflect" else (lambda d: 3)
    pads = [int(b.rng.integers(0, min(limit(d), 3) + 1)) for d in shape] * 2
    pads = [p if b.rng.random() < 0.6 else 0 for p in pads]
    inputs = [x, b.ints(pads)]
    if mode == "constant" and b.rng.random() < 0.5:
        inputs.append(b.const(np.float32(b.rng.standard_normal())))
    return b.add("Pad", inputs, mode=mode)


def reduce(op: str):
    def build(b: Builder, x: str) -> str:
        rank = _rank(b, x)
        axes = [int(a) for a in b.rng.choice(rank, size=int(b.rng.integers(0, rank + 1)), replace=False)]
        axes = [a - rank if b.rng.random() < 0.3 else a for a in axes]
        attrs = dict(keepdims=int(b.rng.integers(2)))
        inputs = [x]
        if axes:
            if op == "ReduceSum" or b.opset >= 18:
                inputs.append(b.ints(axes))
            else:
                attrs["axes"] = axes
        return b.add(op, inputs, **attrs)
    build.__name__ = op.lower()
    return build


def batch_normalization(b: Builder, x: str) -> str:
    shape = b.shapes[x]
    if len(shape) < 2:
        raise Skip("rank")
    c = shape[1]
    scale = b.const(b.rng.uniform(0.5, 1.5, c).astype(np.float32))
    bias = b.const((b.rng.standard_normal(c) * 0.1).astype(np.float32))
    mean = b.const((b.rng.standard_normal(c) * 0.1).astype(np.float32))
    var = b.const(b.rng.uniform(0.5, 2.0, c).astype(np.float32))
    return b.add("BatchNormalization", [x, scale, bias, mean, var], epsilon=float(np.float32(_pick(b.rng, [1e-5, 1e-3]))))


def layer_normalization(b: Builder, x: str) -> str:
    _rank(b, x)
    shape = b.shapes[x]
    axis = _axis(b.rng, len(shape))
    norm_shape = shape[axis:]
    if math.prod(norm_shape) < 2:
        raise Skip("normalising single elements is all-zero")
    inputs = [x, b.const(b.rng.uniform(0.5, 1.5, norm_shape).astype(np.float32))]
    if b.rng.random() < 0.6:
        inputs.append(b.const((b.rng.standard_normal(norm_shape) * 0.1).astype(np.float32)))
    return b.add("LayerNormalization", inputs, axis=axis, epsilon=float(np.float32(_pick(b.rng, [1e-5, 1e-3]))))


def instance_normalization(b: Builder, x: str) -> str:
    shape = b.shapes[x]
    if len(shape) < 3 or math.prod(shape[2:]) < 2:
        raise Skip("needs N, C and spatial dims")
    c = shape[1]
    return b.add("InstanceNormalization", [x, b.const(b.rng.uniform(0.5, 1.5, c).astype(np.float32)),
                                          b.const((b.rng.standard_normal(c) * 0.1).astype(np.float32))],
                 epsilon=float(np.float32(_pick(b.rng, [1e-5, 1e-3]))))


def softmax(b: Builder, x: str) -> str:
    rank = _rank(b, x)
    if b.rng.random() < 0.2:
        return b.add("Softmax", [x])  # default axis -1
    return b.add("Softmax", [x], axis=_axis(b.rng, rank))


def activation(op: str, **ranges):
    def build(b: Builder, x: str) -> str:
        attrs = {k: float(np.float32(b.rng.uniform(lo, hi))) for k, (lo, hi) in ranges.items() if b.rng.random() < 0.7}
        return b.add(op, [x], **attrs)
    build.__name__ = op.lower()
    return build


def gelu(b: Builder, x: str) -> str:
    if b.opset < 20:
        raise Skip("Gelu is opset 20")
    return b.add("Gelu", [x], approximate=str(_pick(b.rng, ["none", "tanh"])))


OP_BUILDERS = [
    conv, conv, conv_transpose, matmul, gemm,
    binary("Add"), binary("Mul"), binary("Sub"), binary("Div"), variadic("Max"), variadic("Min"),
    max_pool, average_pool, global_average_pool, reshape, flatten, transpose, concat, slice_, pad,
    reduce("ReduceSum"), reduce("ReduceMean"), reduce("ReduceMax"),
    batch_normalization, layer_normalization, instance_normalization, softmax,
    activation("Relu"), activation("Sigmoid"), activation("Tanh"), activation("LeakyRelu", alpha=(0.01, 0.5)),
    activation("Elu", alpha=(0.1, 2.0)), activation("HardSigmoid", alpha=(0.1, 0.5), beta=(0.2, 0.8)), gelu,
]


def _input_shape(rng: np.random.Generator) -> tuple:
    rank = int(rng.choice([4, 4, 4, 3, 2, 1, 5], p=[0.3, 0.15, 0.1, 0.2, 0.15, 0.05, 0.05]))
    if rank == 4:
        return (int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(2, 13)), int(rng.integers(2, 13)))
    if rank == 3:
        return (int(rng.integers(1, 3)), int(rng.integers(1, 9)), int(rng.integers(2, 17)))
    return tuple(int(rng.integers(1, 9 if rank == 5 else 17)) for _ in range(rank))


def random_model(seed: int, builders=None, opsets=OPSETS) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A valid float32 model of 1-MAX_NODES nodes and its inputs, both determined by `seed` (nodes drawn from
    `builders`, OP_BUILDERS by default)."""
    builders = builders or OP_BUILDERS
    rng = np.random.default_rng(seed)
    b = Builder(rng, opset=int(rng.choice(opsets)))
    x = b.graph_input(_input_shape(rng))
    wanted = int(rng.integers(1, MAX_NODES + 1))
    made: list[str] = []
    attempts = 0
    while len(made) < wanted and attempts < 200:
        attempts += 1
        builder = builders[rng.integers(len(builders))]
        mark = b.mark()
        try:
            x = builder(b, x)
        except Skip:
            b.rollback(mark)  # no unused constants or inputs left behind
            continue
        made.append(x)
    if not made:  # every draw was skipped: still a valid one-node graph
        made.append(b.add("Relu", [x]))
    outputs = [t for t in made[:-1] if rng.random() < 0.15] + [made[-1]]
    model = b.model(outputs)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    return model, b.feeds


def describe(model: onnx.ModelProto) -> str:
    return " -> ".join(n.op_type for n in model.graph.node)
