"""Quantized islands to integer ops: DequantizeLinear -> Conv / MatMul / Gemm [-> ReLU / Clip] ->
QuantizeLinear (QDQ models, and the QOperator ops, which the frontend imports as such islands) becomes one
integer op that reads the 8-bit tensor and writes the 8-bit one:

- constant weights (int8, symmetric, per tensor or per output channel): QuantizedConv / QuantizedMatMul
  (runtime_c/kernels/qs8-gemm): int32 accumulation; the zero points and the bias folded into one int32 bias
  at build time; fixed-point requantization (ops/_qs8 says why); ReLU / Clip as the output's clamp bounds
  (Q is monotonic, so Q(clip(y, a, b)) = clip(Q(y), Q(a), Q(b)) exactly);
- two activations (attention's products): QLinearMatMul;
- a QOperator QLinearConv with the same kind of weights: QuantizedConv too;
- an op whose outputs are its input's values picked by order (Op.quantized_form "monotonic": MaxPool) or by
  position ("moves": Reshape, Flatten, Transpose), with the op itself on the 8-bit tensor (exact), then a
  Requantize where the output's scale or zero point differ;
- an op whose output is its inputs' values copied ("copies": Concat): the op on the 8-bit inputs, an input
  whose scale or zero point differs from the output's first requantized (Requantize, fixed point);
- Add ("add") and Mul ("mul") of two 8-bit tensors, broadcasting [-> ReLU / Clip]: QuantizedAdd (both ratios
  to the output's scale in fixed point over one shift) and QuantizedMul (the product's ratio in fixed point),
  the activation as the clamp;
- an elementwise op of one 8-bit tensor and constant scalars ("lookup": Sigmoid, Tanh, HardSwish, LeakyRelu,
  ..., and Add / Mul of a scalar): QuantizedLookup, a 256-entry table made by evaluating the island at build
  time on every input code;
- AveragePool and GlobalAveragePool ("average"): QuantizedAveragePool (int32 window sums, requantized);
- a per-channel affine map of constant parameters ("affine": BatchNormalization): a per-channel Requantize on
  the 8-bit values (exact but for ties: why not folded into the convolution before, see _affine);
- Softmax along contiguous rows ("softmax"): QuantizedSoftmax (exponentials from a table by each code's distance
  from the row's largest, summed and divided in float32 per row: no float tensor in the arena).

The island's DequantizeLinear nodes lose their readers and go with dead code, so a Q -> DQ pair between two
integer ops leaves only the 8-bit tensor. An op with no integer form keeps its DQ -> op -> Q and so
dequantizes around itself only; the pass names each such op of a quantized model and why it stayed in float
(as it does every computing op that reads a DequantizeLinear and has no integer form: LogSoftmax, Resize),
and report.json's slow path (mlcc/slow_path.py) lists them with their share of the model's FLOPs as built.
Runs first: it needs the weights' DequantizeLinear nodes before folding.
Ops say what they are (Op.quantization, Op.quantized_form, Op.fused_activation); no op names here.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .. import ops
from ..errors import MlccError
from ..ir import Graph, Node, Value
from ..ops._conv import CONV_ATTRS, conv_geometry
from ..ops._qs8 import K_ALIGN, fixed_point, folded_bias, padded_rows
from ..ops.q_linear_mat_mul import QLinearMatMul
from ..ops.quantized_add import QuantizedAdd
from ..ops.quantized_average_pool import QuantizedAveragePool
from ..ops.quantized_conv import QuantizedConv
from ..ops.quantized_lookup import QuantizedLookup
from ..ops.quantized_mat_mul import QuantizedMatMul
from ..ops.quantized_mul import QuantizedMul
from ..ops.quantized_softmax import QuantizedSoftmax
from ..ops.requantize import Requantize
from ..ops.softmax import softmax_view
from ._rewrite import Rewriter

EIGHT_BIT = (np.dtype(np.uint8), np.dtype(np.int8))


def _op(node: Node | None):
    return ops.of(node) if node is not None else None


class _Quant:
    """A per-tensor DequantizeLinear or QuantizeLinear node's constant scale and zero point."""

    def __init__(self, node: Node, kind: str):
        self.node = node
        op = _op(node)
        scale, zero = node.input(1), node.input(2)  # any producer: a Transpose has one input
        self.ok = (op is not None and op.quantization == kind and scale is not None and scale.is_const and (zero is None or zero.is_const)
                   and int(node.attrs.get("block_size", 0) or 0) == 0)
        if self.ok:
            self.scale = np.asarray(scale.data, np.float64).reshape(-1)
            self.zero = (np.zeros_like(self.scale, np.int64) if zero is None
                         else np.asarray(zero.data, np.int64).reshape(-1))
            self.per_tensor = self.scale.size == 1
            self.axis = int(node.attrs.get("axis", 1))
            # the 8-bit side: a DequantizeLinear's input, a QuantizeLinear's output
            self.tensor = node.inputs[0] if kind == "dequantize" else node.outputs[0]

    def params(self) -> tuple[np.float64, int, np.dtype]:
        """(scale, zero point, 8-bit dtype) of a per-tensor pair, the scale as the float32 the op computes with."""
        return np.float64(np.float32(self.scale[0])), int(self.zero[0]), self.tensor.dtype

    def same_params(self, other: "_Quant") -> bool:
        return self.params() == other.params()


def _dequantized(m: Rewriter, value: Value | None) -> _Quant | None:
    node = m.producers.get(id(value)) if value is not None else None
    if node is None:
        return None
    q = _Quant(node, "dequantize")
    return q if q.ok and node.inputs[0].dtype in EIGHT_BIT + (np.dtype(np.int32),) else None


def _eight_bit_input(m: Rewriter, value: Value | None) -> _Quant | None:
    """The DequantizeLinear producing `value` from an 8-bit tensor per tensor, or None."""
    x = _dequantized(m, value)
    return x if x is not None and x.tensor.dtype in EIGHT_BIT and x.per_tensor else None


def _quantized_output(m: Rewriter, value: Value) -> _Quant | None:
    """The QuantizeLinear that alone reads `value`, per tensor to 8 bits, or None."""
    q = m.sole_reader(value)
    y = _Quant(q, "quantize") if q is not None else None
    if y is None or not y.ok or not y.per_tensor or q.inputs[0] is not value or y.tensor.dtype not in EIGHT_BIT:
        return None
    return y


def _output_island(m: Rewriter, value: Value) -> tuple[list[Node], tuple[str, float, float] | None, _Quant] | None:
    """The nodes after the op up to the QuantizeLinear (an optional fusable activation, then Q)."""
    nodes, activation = [], None
    reader = m.sole_reader(value)
    act = _op(reader).fused_activation(reader) if reader is not None and _op(reader) is not None else None
    if act is not None and act[0] in ("relu", "clip") and reader.inputs[0] is value:
        nodes.append(reader)
        activation, value = act, reader.outputs[0]
    q = _quantized_output(m, value)
    return None if q is None else ([*nodes, q.node], activation, q)


def _clamp(q: _Quant, dtype: np.dtype, activation) -> tuple[int, int]:
    info = np.iinfo(dtype)
    lo, hi = int(info.min), int(info.max)

    def quantized(v: float) -> int:
        return int(np.clip(np.rint(np.float32(v) / np.float32(q.scale[0])) + q.zero[0], info.min, info.max))

    if activation is not None:
        kind, a, b = activation
        lo = max(lo, quantized(0.0 if kind == "relu" else a))
        if kind == "clip":
            hi = min(hi, quantized(b))
    return lo, hi


def _weights(form: str, node: Node, w: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The weights as [n, k] rows and the DequantizeLinear axis a per-channel scale must have."""
    if form == "conv":
        return w.reshape(w.shape[0], -1), 0
    if w.ndim != 2:
        return None
    if form == "gemm" and int(node.attrs.get("transB", 0)):
        return w, 0
    return w.T, 1


def _integer_op(m: Rewriter, node: Node, form: str) -> tuple[Node, list[Node]] | str:
    """The integer node for an island around `node` and the nodes it replaces, or why it stays float."""
    x = _dequantized(m, node.inputs[0])
    w = _dequantized(m, node.inputs[1])
    if x is None or w is None:
        return "not between DequantizeLinear nodes"
    x_q = x.tensor
    if _eight_bit_input(m, node.inputs[0]) is None:
        return "activations not 8-bit per tensor"
    tail = _output_island(m, node.outputs[0])
    if tail is None:
        return "output not quantized per tensor (alone)"
    after, activation, y = tail
    y_value = y.tensor
    if not w.tensor.is_const:
        if form != "matmul" or activation is not None or _eight_bit_input(m, node.inputs[1]) is None:
            return "activation operands with an activation or per-channel scale"
        return _qlinear_matmul(node, x, w, after[-1]), after
    weights = np.asarray(w.tensor.data)
    if weights.dtype != np.int8 or np.any(w.zero != 0):
        return "weights not symmetric int8"
    if form == "gemm" and (int(node.attrs.get("transA", 0)) or float(node.attrs.get("alpha", 1.0)) != 1.0
                           or float(node.attrs.get("beta", 1.0)) != 1.0 or len(x_q.shape) != 2):
        return "Gemm with transA, alpha or beta"
    shaped = _weights(form, node, weights)
    if shaped is None:
        return "batched weights"
    rows, axis = shaped
    n = rows.shape[0]
    if not w.per_tensor and (w.scale.size != n or axis != w.axis % weights.ndim):
        return "weight scales not per output channel"
    w_scale = np.broadcast_to(w.scale, (n,))
    acc_scale = x.scale[0] * w_scale
    bias = np.zeros(n, np.int64)
    if form in ("conv", "gemm") and node.input(2) is not None:
        b = _dequantized(m, node.input(2))
        if b is not None and b.tensor.is_const and b.tensor.dtype == np.int32 and np.all(b.zero == 0):
            b_scale = np.broadcast_to(b.scale, (n,))
            values = np.asarray(b.node.inputs[0].data, np.float64).reshape(-1)
            if values.size != n:
                return "bias not one per output channel"
            # onnxruntime's quantizer gives the bias the scale x_scale * w_scale; another is rescaled
            same = np.allclose(b_scale, acc_scale, rtol=1e-6, atol=0)
            bias = values.astype(np.int64) if same else np.rint(values * b_scale / acc_scale).astype(np.int64)
        elif node.input(2).is_const and node.input(2).size == n:
            bias = np.rint(np.asarray(node.input(2).data, np.float64).reshape(-1) / acc_scale).astype(np.int64)
        else:
            return "bias neither constant nor a dequantized int32 constant"
    return _build(m, node, form, x, x_q, rows, acc_scale, bias, activation, y, y_value, after)


def _build(m: Rewriter, node: Node, form: str, x: "_Quant", x_q: Value, rows: np.ndarray, acc_scale: np.ndarray,
           bias: np.ndarray, activation, y: "_Quant", y_value: Value, after: list[Node]) -> tuple[Node, list[Node]] | str:
    """The integer node from an island's parts: x per tensor, int8 weights as [n, k] rows, the accumulator's
    scale and int32 bias per output channel, y per tensor. `node` gives the convolution's attributes."""
    n = rows.shape[0]
    requant = fixed_point(acc_scale / y.scale[0])
    if requant is None:
        return "output scale below the product's"
    a_flip = 128 if x_q.dtype == np.uint8 else 0
    try:
        folded = folded_bias(bias, rows, int(x.zero[0]), a_flip)
    except OverflowError:
        return "bias out of int32 range"
    lo, hi = _clamp(y, y_value.dtype, activation)
    attrs = {"a_flip": a_flip, "y_zero": int(y.zero[0]), "y_min": lo, "y_max": hi}
    if form == "conv":
        try:
            geo = conv_geometry(node)
        except MlccError:
            return "convolution geometry"
        if len(geo.kernel) > 2 or node.inputs[0].shape[0] < 1:
            return "3-D convolution"
        pad = lambda v: [1] * (2 - len(v)) + [int(i) for i in v]  # 1-D as height 1
        attrs.update(kernel=pad(geo.kernel), stride=pad(geo.stride), dilation=pad(geo.dilation),
                     pad_begin=[0] * (2 - len(geo.pad)) + [int(i) for i in geo.pad],
                     group=int(node.attrs.get("group", 1)), x_zero=int(x.zero[0]))
        integer_op = QuantizedConv
    else:
        attrs["k"] = rows.shape[1]
        integer_op = QuantizedMatMul
    base = node.name
    depthwise = form == "conv" and int(node.attrs.get("group", 1)) == node.inputs[0].shape[1] == n
    weights = padded_rows(rows, 1 if depthwise else K_ALIGN)
    constants = [Value(m.fresh(f"{base}_qweights"), np.dtype(np.int8), weights.shape),
                 Value(m.fresh(f"{base}_qbias"), np.dtype(np.int32), (n,)),
                 Value(m.fresh(f"{base}_qmultiplier"), np.dtype(np.int32), (n,)),
                 Value(m.fresh(f"{base}_qshift"), np.dtype(np.int32), (n,))]
    for value, data in zip(constants, (weights, folded, *requant)):
        value.data = np.ascontiguousarray(data)
        value.shape = tuple(data.shape)
    return Node(integer_op.op_type, base, [x_q, *constants], [y_value], attrs, integer_op.domain, 1), after


class _Constant:
    """A per-tensor or per-channel scale and zero point given as a QOperator op's constant inputs."""

    def __init__(self, scale: Value | None, zero: Value | None):
        self.ok = scale is not None and scale.is_const and (zero is None or zero.is_const)
        if self.ok:
            self.scale = np.asarray(scale.data, np.float64).reshape(-1)
            self.zero = (np.zeros_like(self.scale, np.int64) if zero is None
                         else np.asarray(zero.data, np.int64).reshape(-1))
            self.per_tensor = self.scale.size == 1


def _float_conv(node: Node, x_q: Value) -> Node:
    """A float Conv with a QLinearConv's attributes and shapes, for the geometry."""
    w = node.inputs[3]
    stand_ins = [Value(x_q.name, np.dtype(np.float32), x_q.shape), Value(w.name, np.dtype(np.float32), w.shape, w.data)]
    attrs = {name: node.attrs.get(name, default) for name, default in CONV_ATTRS.items()}
    return Node(node.op_type, node.name, stand_ins, [], attrs, node.domain, node.opset)  # conv_geometry reads shapes


def _qlinear_conv(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """A QOperator QLinearConv with constant symmetric int8 weights: the same integer op, with no clamp."""
    x_q, w_value, b_value = node.inputs[0], node.inputs[3], node.input(8)
    x, w, y = _Constant(node.inputs[1], node.input(2)), _Constant(node.inputs[4], node.input(5)), _Constant(node.inputs[6], node.input(7))
    if not (x.ok and w.ok and y.ok and x.per_tensor and y.per_tensor) or not w_value.is_const:
        return "scales or weights not constant"
    weights = np.asarray(w_value.data)
    if weights.dtype != np.int8 or np.any(w.zero != 0) or x_q.dtype not in EIGHT_BIT:
        return "weights not symmetric int8"
    rows = weights.reshape(weights.shape[0], -1)
    n = rows.shape[0]
    if not w.per_tensor and w.scale.size != n:
        return "weight scales not per output channel"
    acc_scale = x.scale[0] * np.broadcast_to(w.scale, (n,))
    bias = np.zeros(n, np.int64)
    if b_value is not None:
        if not b_value.is_const or b_value.size != n:
            return "bias not constant per output channel"
        bias = np.asarray(b_value.data, np.int64).reshape(-1)
    conv = _float_conv(node, x_q)
    return _build(m, conv, "conv", x, x_q, rows, acc_scale, bias, None, y, node.outputs[0], [])


def _qlinear_matmul(node: Node, a: _Quant, b: _Quant, q: Node) -> Node:
    inputs = [a.node.inputs[0], a.node.inputs[1], a.node.input(2), b.node.inputs[0], b.node.inputs[1],
              b.node.input(2), q.inputs[1], q.input(2)]
    return Node(QLinearMatMul.op_type, node.name, inputs, [q.outputs[0]], {}, QLinearMatMul.domain, 21)


def _monotonic(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(x; s, z) -> op -> Q(s, z), for an op whose outputs are input values picked by order (MaxPool) or by
    position (Reshape): the op on x itself, exactly (dequantization is increasing and Q(DQ(q)) = q); its other
    inputs (a shape) as they are."""
    x = _eight_bit_input(m, node.inputs[0])
    if x is None:
        return "input not dequantized 8-bit per tensor"
    if any(m.is_read(v) for v in node.outputs[1:]):
        return "its indices are read"
    y = _quantized_output(m, node.outputs[0])
    if y is None:
        return "output not quantized per tensor (alone)"
    x_q, y_q, q = x.tensor, y.tensor, y.node
    if y_q.dtype != x_q.dtype:
        return "output of another 8-bit type"
    if x.same_params(y):
        return Node(node.op_type, node.name, [x_q, *node.inputs[1:]], [y_q], dict(node.attrs), node.domain, node.opset), [q]
    # other parameters: the op on x, then its result requantized (requantization is non-decreasing too)
    picked = Value(m.fresh(f"{node.outputs[0].name}_{x_q.dtype.name}"), x_q.dtype, node.outputs[0].shape)
    requantize = _requantize(m, node, x, y, picked, y_q)
    if isinstance(requantize, str):
        return requantize
    return [Node(node.op_type, node.name, [x_q, *node.inputs[1:]], [picked], dict(node.attrs), node.domain, node.opset),
            requantize], [q]


def _requantize(m: Rewriter, node: Node, x: _Quant, y: _Quant, x_q: Value, out: Value) -> Node | str:
    """A Requantize of 8-bit x_q from x's scale and zero point to y's, into `out` (named after `node`)."""
    (x_scale, x_zero, _), (y_scale, y_zero, _) = x.params(), y.params()
    requant = fixed_point(x_scale / y_scale)
    if requant is None:
        return "an input's scale far above the output's"
    lo, hi = _clamp(y, out.dtype, None)
    return Node(Requantize.op_type, m.fresh(f"{node.name}_requantize"), [x_q], [out],
                {"x_zero": x_zero, "multiplier": int(requant[0][0]), "shift": int(requant[1][0]),
                 "y_zero": y_zero, "y_min": lo, "y_max": hi}, Requantize.domain, 1)


def _copies(m: Rewriter, node: Node) -> tuple[list[Node], list[Node]] | str:
    """DQ(x_i; s_i, z_i) -> op -> Q(s, z), for an op whose output is its inputs' values copied (Concat): the op on
    the 8-bit inputs, each input of other parameters than the output's requantized to them first."""
    parts = [_eight_bit_input(m, v) for v in node.inputs]
    y = _quantized_output(m, node.outputs[0])
    if y is None:
        return "output not quantized per tensor (alone)"
    y_q, q = y.tensor, y.node
    if any(x is None or x.tensor.dtype != y_q.dtype for x in parts):
        return "inputs not dequantized per tensor from the output's 8-bit type"
    inputs, made = [], []
    for x in parts:
        x_q = x.tensor
        if x.same_params(y):
            inputs.append(x_q)
            continue
        r = Value(m.fresh(f"{x_q.name}_requantized"), y_q.dtype, x_q.shape)
        requantize = _requantize(m, node, x, y, x_q, r)
        if isinstance(requantize, str):
            return requantize
        made.append(requantize)
        inputs.append(r)
    attrs = dict(node.attrs)
    return [*made, Node(node.op_type, node.name, inputs, [y_q], attrs, node.domain, node.opset)], [q]


def _binary_operands(m: Rewriter, node: Node):
    """(a, b, a_q, b_q, after, activation, y, y_q) of DQ(a) op DQ(b) [-> ReLU / Clip] -> Q with both 8-bit per
    tensor of the output's type, broadcasting to the output's shape; or why not."""
    if sum(v is not None for v in node.inputs) != 2:
        return "not two operands"
    a, b = _dequantized(m, node.inputs[0]), _dequantized(m, node.inputs[1])
    if a is None or b is None:
        return "not between DequantizeLinear nodes"
    tail = _output_island(m, node.outputs[0])
    if tail is None:
        return "output not quantized per tensor (alone)"
    after, activation, y = tail
    y_q, a_q, b_q = y.tensor, a.tensor, b.tensor
    if not (a.per_tensor and b.per_tensor) or a_q.dtype != y_q.dtype or b_q.dtype != y_q.dtype:
        return "operands not 8-bit per tensor of the output's type"
    try:
        if tuple(np.broadcast_shapes(a_q.shape, b_q.shape)) != tuple(y_q.shape):
            return "operands do not broadcast to the output"
    except ValueError:
        return "operands do not broadcast"
    return a, b, a_q, b_q, after, activation, y, y_q


def _add(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(a) + DQ(b) [-> ReLU / Clip] -> Q, both 8-bit per tensor, broadcasting: a QuantizedAdd."""
    found = _binary_operands(m, node)
    if isinstance(found, str):
        return found
    a, b, a_q, b_q, after, activation, y, y_q = found
    (a_scale, a_zero, _), (b_scale, b_zero, _), (y_scale, y_zero, _) = a.params(), b.params(), y.params()
    ratios = np.array([a_scale, b_scale]) / y_scale
    exponent = max(np.frexp(ratios)[1])
    shift = 31 - int(exponent)  # the larger ratio's multiplier in [2^30, 2^31)
    if not 1 <= shift <= 40:  # products below 2^40, their sum below 2^41: far from the bias of 2^62
        return "operand scales too far from the output's"
    multipliers = [int(v) for v in np.minimum(np.rint(ratios * 2.0 ** shift), 2**31 - 1)]
    lo, hi = _clamp(y, y_q.dtype, activation)
    attrs = {"a_zero": a_zero, "b_zero": b_zero, "a_multiplier": multipliers[0],
             "b_multiplier": multipliers[1], "shift": shift, "y_zero": y_zero, "y_min": lo, "y_max": hi}
    return Node(QuantizedAdd.op_type, node.name, [a_q, b_q], [y_q], attrs, QuantizedAdd.domain, 1), after


def _mul(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(a) * DQ(b) [-> ReLU / Clip] -> Q, both 8-bit per tensor, broadcasting: a QuantizedMul."""
    found = _binary_operands(m, node)
    if isinstance(found, str):
        return found
    a, b, a_q, b_q, after, activation, y, y_q = found
    (a_scale, a_zero, _), (b_scale, b_zero, _), (y_scale, y_zero, _) = a.params(), b.params(), y.params()
    real = a_scale * b_scale / y_scale
    requant = fixed_point(np.array([real]))
    if requant is None or int(requant[1][0]) > 46:  # |a * b| < 2^16 times the multiplier: far from 2^62
        return "operand scales too far from the output's"
    lo, hi = _clamp(y, y_q.dtype, activation)
    attrs = {"a_zero": a_zero, "b_zero": b_zero, "multiplier": int(requant[0][0]),
             "shift": int(requant[1][0]), "y_zero": y_zero, "y_min": lo, "y_max": hi}
    return Node(QuantizedMul.op_type, node.name, [a_q, b_q], [y_q], attrs, QuantizedMul.domain, 1), after


def _average(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(x) -> AveragePool / GlobalAveragePool [-> ReLU / Clip] -> Q, x 8-bit per tensor: a QuantizedAveragePool
    (int32 window sums requantized; a global pool is the window of the whole plane)."""
    x = _eight_bit_input(m, node.inputs[0])
    if x is None:
        return "input not dequantized 8-bit per tensor"
    x_q = x.tensor
    if not 3 <= len(x_q.shape) <= 5:
        return "not 1-D to 3-D pooling"
    tail = _output_island(m, node.outputs[0])
    if tail is None:
        return "output not quantized per tensor (alone)"
    after, activation, y = tail
    (x_scale, x_zero, _), (y_scale, y_zero, _) = x.params(), y.params()
    y_q, ratio = y.tensor, x_scale / y_scale
    if not ratio < 2.0 ** 20:
        return "input scale far above the output's"
    attrs = {name: node.attrs[name] for name in QuantizedAveragePool.attrs if node.attrs.get(name) is not None}
    if node.attrs.get("kernel_shape") is None:  # global: the whole plane
        attrs = {"kernel_shape": [int(d) for d in x_q.shape[2:]]}
    lo, hi = _clamp(y, y_q.dtype, activation)
    attrs.update(x_zero=x_zero, y_zero=y_zero, y_min=lo, y_max=hi, scale_ratio=float(ratio))
    return Node(QuantizedAveragePool.op_type, node.name, [x_q], [y_q], attrs, QuantizedAveragePool.domain, 1), after


def _constant_operand(m: Rewriter, value: Value | None) -> np.ndarray | None:
    """A constant operand's values: a constant, or a per-tensor DequantizeLinear of one (folded later) as float32."""
    if value is None:
        return None
    if value.is_const:
        return np.asarray(value.data)
    dq = _dequantized(m, value)
    if dq is None or not dq.tensor.is_const or not dq.per_tensor:
        return None
    q = np.asarray(dq.tensor.data, np.int64).reshape(value.shape)
    return ((q - dq.zero[0]).astype(np.float32) * np.float32(dq.scale[0])).astype(np.float32)


def _scalar_operand(m: Rewriter, value: Value | None) -> np.ndarray | None:
    """A constant operand of one element (see _constant_operand)."""
    return _constant_operand(m, value) if value is not None and value.size == 1 else None


def _affine(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(x) -> a per-channel affine map with constant parameters (Op.channel_affine: an inference
    BatchNormalization not folded before quantization) [-> ReLU / Clip] -> Q, x 8-bit per tensor: a per-channel
    Requantize, y = round((x - zx) * s * sx / sy + t / sy) + zy, rounded once in fixed point. Not folded into the
    convolution before it: onnxruntime rounds that convolution's output to its 8-bit tensor first, and the map
    multiplies that rounding (up to 4 output steps on ShuffleNet, where |s| * sx / sy reaches 4), as it does
    the clamp at the 8-bit tensor's range; on the 8-bit values the result is the exact one but for ties."""
    x = _eight_bit_input(m, node.inputs[0])
    if x is None:
        return "input not dequantized 8-bit per tensor"
    x_q = x.tensor
    if len(x_q.shape) < 2 or any(m.is_read(v) for v in node.outputs[1:]):
        return "not one output of a channel axis"
    params = [_constant_operand(m, v) for v in node.inputs[1:]]
    if any(p is None for p in params):
        return "parameters not constant"
    stand_ins = [Value(v.name, np.dtype(np.float32), v.shape, np.asarray(p, np.float32).reshape(v.shape))
                 for v, p in zip(node.inputs[1:], params)]
    stand_in = Node(node.op_type, node.name, [Value(x_q.name, np.dtype(np.float32), x_q.shape), *stand_ins], [],
                    dict(node.attrs), node.domain, node.opset)
    affine = _op(node).channel_affine(stand_in)
    if affine is None or affine[2]:
        return "not a per-channel affine map"
    tail = _output_island(m, node.outputs[0])
    if tail is None:
        return "output not quantized per tensor (alone)"
    after, activation, y = tail
    (x_scale, x_zero, _), (y_scale, y_zero, _) = x.params(), y.params()
    ratios, offsets = affine[0] * x_scale / y_scale, affine[1] / y_scale
    # one shift putting the largest multiplier and offset in int32 (4 bytes a channel each, as the float
    # scale and shift were); at 20 bits or more the rounding of both moves a result by under 2^-12 of a step
    largest = float(max(np.max(np.abs(ratios)), np.max(np.abs(offsets)), 2.0 ** -20))
    shift = min(40, 30 - int(np.frexp(largest)[1]))
    if shift < 20:
        return "scales too far from the output's"
    shape = (x_q.shape[1],) + (1,) * (len(x_q.shape) - 2)
    multipliers = np.clip(np.rint(ratios * 2.0 ** shift), -(2**31 - 1), 2**31 - 1).astype(np.int32).reshape(shape)
    lo, hi = _clamp(y, y.tensor.dtype, activation)
    constants = []
    for suffix, data in (("multiplier", multipliers), ("offset", np.rint(offsets * 2.0 ** shift).astype(np.int32).reshape(shape))):
        value = Value(m.fresh(f"{node.name}_q{suffix}"), data.dtype, data.shape)
        value.data = data
        constants.append(value)
    attrs = {"x_zero": x_zero, "shift": shift, "y_zero": y_zero, "y_min": lo, "y_max": hi}
    return Node(Requantize.op_type, node.name, [x_q, *constants], [y.tensor], attrs, Requantize.domain, 1), after


def _lookup(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(x) -> an elementwise op (its other operands constant scalars) [-> ReLU / Clip] -> Q, x 8-bit per
    tensor: a QuantizedLookup whose 256-entry table is the island evaluated at build time on every code of x."""
    x = _eight_bit_input(m, node.inputs[0])
    if x is None:
        return "input not dequantized 8-bit per tensor"
    others = [(i, _scalar_operand(m, v)) for i, v in enumerate(node.inputs) if i > 0 and v is not None]
    if any(data is None for _, data in others):
        return "an operand neither the 8-bit input nor a constant scalar"
    x_q = x.tensor
    if len(node.outputs) != 1 or node.outputs[0].shape != x_q.shape:
        return "output not of the input's shape"
    tail = _output_island(m, node.outputs[0])
    if tail is None:
        return "output not quantized per tensor (alone)"
    after, activation, y = tail
    y_q = y.tensor
    codes = np.arange(256, dtype=np.uint8).view(x_q.dtype)  # entry b: the code whose byte is b
    values = ((codes.astype(np.int64) - x.zero[0]).astype(np.float32) * np.float32(x.scale[0])).astype(np.float32)
    inputs = [values] + [None] * (len(node.inputs) - 1)
    for i, data in others:
        inputs[i] = data.astype(node.inputs[i].dtype)
    try:
        result = np.asarray(_op(node).reference(node, inputs)[0], np.float32)
    except Exception as exc:  # noqa: BLE001 - an op its reference cannot evaluate here stays in float
        return f"no build-time evaluation ({type(exc).__name__})"
    if result.shape != values.shape:
        return "output not of the input's shape"
    info = np.iinfo(y_q.dtype)
    quantized = np.rint(result / np.float32(y.scale[0])) + y.zero[0]  # as QuantizeLinear, in float32
    lo, hi = _clamp(y, y_q.dtype, activation)
    table = np.clip(np.nan_to_num(quantized, nan=float(y.zero[0])), max(lo, info.min), min(hi, info.max)).astype(y_q.dtype)
    constant = Value(m.fresh(f"{node.name}_table"), y_q.dtype, (256,))
    constant.data = table
    return Node(QuantizedLookup.op_type, node.name, [x_q, constant], [y_q], {}, QuantizedLookup.domain, 1), after


def _softmax(m: Rewriter, node: Node) -> tuple[Node, list[Node]] | str:
    """DQ(x) -> Softmax -> Q along contiguous rows, x 8-bit per tensor: a QuantizedSoftmax (a table of
    exponentials by the distance from the row's largest code)."""
    x = _eight_bit_input(m, node.inputs[0])
    if x is None:
        return "input not dequantized 8-bit per tensor"
    try:
        outer, n, inner = softmax_view(node)
    except MlccError:
        return "axis out of range"
    if inner != 1:
        return "not along the last axis"
    tail = _output_island(m, node.outputs[0])
    if tail is None or tail[1] is not None:
        return "output not quantized per tensor (alone)"
    after, _, y = tail
    y_q = y.tensor
    distances = np.arange(256, dtype=np.float32)
    table = np.exp(-(distances * np.float32(x.scale[0])).astype(np.float32)).astype(np.float32)
    constant = Value(m.fresh(f"{node.name}_exp"), np.dtype(np.float32), (256,))
    constant.data = table
    info = np.iinfo(y_q.dtype)
    attrs = {"rows": int(outer), "n": int(n), "y_scale": float(np.float32(y.scale[0])), "y_zero": int(y.zero[0]),
             "y_min": int(info.min), "y_max": int(info.max)}
    return Node(QuantizedSoftmax.op_type, node.name, [x.tensor, constant], [y_q], attrs,
                QuantizedSoftmax.domain, 1), after


def _reads_dequantized(m: Rewriter, node: Node) -> bool:
    """Does the node read a DequantizeLinear's output (it computes in float inside a quantized model)?"""
    return any(v is not None and _op(m.producers.get(id(v))) is not None
               and _op(m.producers.get(id(v))).quantization == "dequantize" for v in node.inputs)


def _computes(node: Node) -> bool:
    try:
        return _op(node).flops(node) > 0
    except Exception:  # noqa: BLE001 - an op that cannot count its FLOPs here is left out of the list
        return False


def run(graph: Graph) -> dict:
    m = Rewriter(graph)
    made: Counter = Counter()
    kept: list[dict] = []
    for node in list(graph.nodes):
        op = _op(node)
        if op is None or node not in graph.nodes:
            continue
        if op.quantized_form is None:
            if op.quantization is None and _reads_dequantized(m, node) and _computes(node):
                kept.append({"node": node.name, "op": node.op_type, "why": "no integer form"})
            continue
        qoperator = op.quantized_form == "qlinear_conv"
        if qoperator:
            found = _qlinear_conv(m, node)
        elif op.quantized_form in ("monotonic", "moves"):
            found = _monotonic(m, node)
        elif op.quantized_form == "copies":
            found = _copies(m, node)
        elif op.quantized_form in ("add", "mul"):
            found = _lookup(m, node)  # of one 8-bit tensor and a constant scalar: a table; else on both
            if isinstance(found, str):
                found = (_add if op.quantized_form == "add" else _mul)(m, node)
        elif op.quantized_form == "softmax":
            found = _softmax(m, node)
        elif op.quantized_form == "average":
            found = _average(m, node)
        elif op.quantized_form == "lookup":
            found = _lookup(m, node)
        elif op.quantized_form == "affine":
            found = _affine(m, node)
        else:
            found = _integer_op(m, node, op.quantized_form)
        if isinstance(found, str):
            if qoperator or (_dequantized(m, node.inputs[0]) is not None and _computes(node)):  # left in float: say why
                kept.append({"node": node.name, "op": node.op_type, "why": found})
            continue
        replacement, replaced = found
        new_nodes = replacement if isinstance(replacement, list) else [replacement]
        gone = {id(n) for n in replaced}
        graph.nodes = [r for n in graph.nodes if id(n) not in gone for r in (new_nodes if n is node else [n])]
        made.update(n.op_type for n in new_nodes)
        m.refresh()
    # the islands' DequantizeLinear nodes no one reads now: gone here, so the passes before dead-code
    # elimination see the 8-bit tensors' real readers (choose_layout's channel shuffles want sole readers)
    unread = [n for n in graph.nodes if _op(n) is not None and _op(n).quantization == "dequantize"
              and not any(m.is_read(v) for v in n.outputs)]
    graph.nodes = [n for n in graph.nodes if n not in unread]
    return {"integer_ops": sum(made.values()), "by_op": dict(sorted(made.items())), "left_in_float": kept,
            "unread_dequantize": len(unread)}
