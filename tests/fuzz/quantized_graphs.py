"""Seeded random quantized graphs, made the way users make them: a random float graph (tests/fuzz/graphs.py)
drawn from the ops int8 models carry, quantized by onnxruntime.quantization.quantize_static in QDQ or
QOperator form, with uint8 or int8 activations and per-tensor or per-channel int8 weights, calibrated on
random inputs of the graph's own shapes. The same seed always gives the same model and inputs."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import numpy as np
import onnx

from tests.fuzz import graphs as g

# The float ops onnxruntime.quantization rewrites into integer form, and a few it leaves in float (Tanh,
# LayerNormalization, ReduceMean) so the islands' borders are drawn too.
QUANTIZABLE_BUILDERS = [
    g.conv, g.conv, g.conv, g.conv_transpose, g.matmul, g.matmul, g.gemm,
    g.binary("Add"), g.binary("Mul"), g.binary("Sub"), g.variadic("Max"),
    g.max_pool, g.average_pool, g.global_average_pool, g.reshape, g.flatten, g.transpose, g.concat, g.slice_,
    g.pad, g.activation("Relu"), g.activation("Relu"), g.activation("Sigmoid"),
    g.activation("LeakyRelu", alpha=(0.01, 0.5)), g.activation("Tanh"), g.softmax, g.layer_normalization,
    g.reduce("ReduceMean"),
]
OPSETS = (13, 17, 20)

# (format, activation type, per-channel weights)
FORMS = {
    "qdq_u8_tensor": ("QDQ", "QUInt8", False),
    "qdq_u8_channel": ("QDQ", "QUInt8", True),
    "qdq_s8_channel": ("QDQ", "QInt8", True),
    "qop_u8_channel": ("QOperator", "QUInt8", True),
    "qop_s8_tensor": ("QOperator", "QInt8", False),
}
CALIBRATION_BATCHES = 4
QUANTIZER_ATTEMPTS = 4
DRAW_STRIDE = 1_000_003  # a seed's next float graph, far from every other seed's first


class QuantizerRefused(Exception):
    """onnxruntime.quantization could not quantize the float graph: a generator finding, not mlcc's."""


def form_of(seed: int) -> str:
    return list(FORMS)[seed % len(FORMS)]


def random_quantized_model(seed: int, form: str | None = None) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The float graph of `seed` quantized in `form` (by default one drawn from the seed), and its inputs.
    When the quantizer refuses a graph or writes one onnxruntime cannot run (its quantizer and its kernels
    disagree on some per-channel forms), the seed's next draw is taken, up to QUANTIZER_ATTEMPTS;
    QuantizerRefused after that."""
    from tests.quantized.reference import reference

    why = ""
    for attempt in range(QUANTIZER_ATTEMPTS):
        model, feeds = g.random_model(seed + attempt * DRAW_STRIDE, QUANTIZABLE_BUILDERS, OPSETS)
        try:
            quantized = _quantize(model, feeds, form or form_of(seed), seed)
            reference(quantized, feeds)
            return quantized, feeds
        except QuantizerRefused as exc:
            why = str(exc)
        except Exception as exc:  # onnxruntime refuses what its quantizer wrote
            why = f"onnxruntime cannot run the quantized graph: {' '.join(str(exc).split())[:300]}"
    raise QuantizerRefused(why)


def _quantize(model: onnx.ModelProto, feeds: dict, form: str, seed: int) -> onnx.ModelProto:
    from onnxruntime import quantization as q

    quant_format, activation, per_channel = FORMS[form]
    rng = np.random.default_rng(seed + 1)
    batches = iter([{name: rng.standard_normal(value.shape).astype(np.float32) for name, value in feeds.items()}
                    for _ in range(CALIBRATION_BATCHES)])

    class Calibration(q.CalibrationDataReader):
        def get_next(self):
            return next(batches, None)

    with tempfile.TemporaryDirectory(prefix="mlcc-qfuzz-") as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, str(src))
        logging.disable(logging.WARNING)  # its advice to pre-process, once per graph
        try:
            q.quantize_static(str(src), str(dst), Calibration(), quant_format=getattr(q.QuantFormat, quant_format),
                              per_channel=per_channel, activation_type=getattr(q.QuantType, activation),
                              weight_type=q.QuantType.QInt8)
        except Exception as exc:
            raise QuantizerRefused(f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}") from None
        finally:
            logging.disable(logging.NOTSET)
        return onnx.load(str(dst))

EIGHT_BIT = (onnx.TensorProto.UINT8, onnx.TensorProto.INT8)


def with_integer_outputs(model: onnx.ModelProto, feeds: dict) -> onnx.ModelProto:
    """`model` with every 8-bit tensor a node makes also a graph output: the islands' borders, so each
    integer op's result can be compared on its own. Their types come from running the reference with every
    tensor an untyped output (onnx's shape inference does not type com.microsoft's QLinear ops)."""
    from tests.quantized.reference import reference

    probe = onnx.ModelProto.FromString(model.SerializeToString())
    shown = {o.name for o in probe.graph.output}
    for node in probe.graph.node:
        probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(o) for o in node.output if o and o not in shown)
    values = reference(probe, feeds)
    exposed = onnx.ModelProto.FromString(model.SerializeToString())
    for node in model.graph.node:
        for name in node.output:
            value = values.get(name)
            if name not in shown and value is not None and value.dtype in (np.uint8, np.int8):
                elem_type = onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
                exposed.graph.output.append(onnx.helper.make_tensor_value_info(name, elem_type, value.shape))
    return exposed


def upstream_integers(model: onnx.ModelProto, tensor: str) -> set[str]:
    """The 8-bit tensors and graph inputs that `tensor` is computed from through float ops alone."""
    producers = {o: n for n in model.graph.node for o in n.output}
    typed = [*model.graph.value_info, *model.graph.output]
    integers = {i.name for i in typed if i.type.tensor_type.elem_type in EIGHT_BIT}
    graph_inputs = {i.name for i in model.graph.input}
    found, seen = set(), set()
    stack = list(producers[tensor].input) if tensor in producers else []
    while stack:
        name = stack.pop()
        if not name or name in seen:
            continue
        seen.add(name)
        if name in integers or name in graph_inputs:
            found.add(name)
        elif name in producers:
            stack.extend(producers[name].input)
    return found


def first_divergences(model: onnx.ModelProto, got: dict, expected: dict) -> list[str]:
    """Tensors of `model` (as with_integer_outputs made it) that differ from the reference by more than one
    quantization step although every tensor they are computed from is bit-identical: faults of mlcc, not a
    rounding tie carried forward by later layers."""
    from tests.quantized.reference import distances

    same = {name for name in expected if np.array_equal(np.asarray(got[name]), np.asarray(expected[name]))}
    faults = []
    for row in distances(model, got, expected):
        beyond = not row.within(1.0) if row.steps is not None else not row.within()
        if beyond and upstream_integers(model, row.output) <= same | {i.name for i in model.graph.input}:
            away = f"{row.steps:.0f} steps" if row.steps is not None else f"max abs err {row.max_abs:.3g}"
            faults.append(f"{row.output}: {away} away from bit-identical inputs")
    return faults
