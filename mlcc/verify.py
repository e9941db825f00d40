"""Golden comparison against onnxruntime (or onnx.reference where onnxruntime is absent)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Comparison:
    ok: bool
    max_abs: float
    max_rel: float
    nmse: float


def compare(got: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> Comparison:
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return Comparison(False, float("inf"), float("inf"), float("inf"))
    if got.dtype.kind in "biu" or expected.dtype.kind in "biu":
        equal = np.array_equal(got.astype(np.int64), expected.astype(np.int64))
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        worst = float(diff.max()) if diff.size else 0.0
        return Comparison(equal, worst, worst, 0.0 if equal else float("inf"))
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf and huge squares are expected here
        return _compare_float(got.astype(np.float64), expected.astype(np.float64), rtol, atol)


def _compare_float(g: np.ndarray, e: np.ndarray, rtol: float, atol: float) -> Comparison:
    same_special = (np.isnan(g) & np.isnan(e)) | (np.isinf(g) & (g == e))
    diff = np.where(same_special, 0.0, np.abs(g - e))
    diff = np.nan_to_num(diff, nan=np.inf)
    rel = diff / np.maximum(np.abs(e), np.finfo(np.float32).tiny)
    ok = bool(np.all(diff <= atol + rtol * np.abs(np.nan_to_num(e))))
    energy = float(np.mean(np.square(np.nan_to_num(e)))) if e.size else 0.0
    nmse = float(np.mean(np.square(np.nan_to_num(diff)))) / energy if energy > 0 else 0.0
    return Comparison(ok, float(diff.max()) if diff.size else 0.0, float(rel.max()) if rel.size else 0.0, nmse)


ORT_MAX_IR_VERSION = 10


def _free_dims_as_symbols(proto):
    """onnxruntime refuses feeds for a dim written as dim_value <= 0 (PaddlePaddle's -1), which mlcc takes
    as free: the reference runs a copy with those dims made symbols."""
    import onnx

    infos = [*proto.graph.input, *proto.graph.output]
    if not any(d.HasField("dim_value") and d.dim_value <= 0 for i in infos for d in i.type.tensor_type.shape.dim):
        return proto
    proto = onnx.ModelProto.FromString(proto.SerializeToString())
    for info in [*proto.graph.input, *proto.graph.output]:
        for axis, d in enumerate(info.type.tensor_type.shape.dim):
            if d.HasField("dim_value") and d.dim_value <= 0:
                d.dim_param = f"{info.name}_free{axis}"
    return proto


def reference_outputs(model, feeds: dict[str, np.ndarray], names: list[str],
                      exact: bool = False) -> tuple[dict[str, np.ndarray], str]:
    """Outputs of `model` (a path or ModelProto) from onnxruntime, one thread; onnx.reference as fallback.
    `exact` turns onnxruntime's graph optimisation off: the graph runs as written, which is a quantized
    model's integer semantics (its fused int8 kernels are not: some saturate on AVX2 without VNNI)."""
    import onnx

    proto = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))
    try:
        import onnxruntime as ort
    except ImportError:
        from onnx.reference import ReferenceEvaluator

        results = ReferenceEvaluator(proto).run(names, feeds)
        return dict(zip(names, results)), "onnx.reference"
    if proto.ir_version > ORT_MAX_IR_VERSION:  # onnx's helpers stamp the newest IR; ORT may lag behind it
        proto = onnx.ModelProto.FromString(proto.SerializeToString())
        proto.ir_version = ORT_MAX_IR_VERSION
    proto = _free_dims_as_symbols(proto)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    if exact:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    results = session.run(names, feeds)
    engine = f"onnxruntime {ort.__version__}"
    return dict(zip(names, results)), f"{engine}, graph optimisation off" if exact else engine


# Ops whose presence makes a model quantized: its outputs are judged in quantization steps.
QUANTIZED_OPS = frozenset({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger",
                           "ConvInteger", "QLinearConv", "QLinearMatMul", "QGemm", "DynamicQuantizeMatMul",
                           "MatMulIntegerToFloat"})


def is_quantized(proto) -> bool:
    return any(n.op_type in QUANTIZED_OPS or n.op_type.startswith("QLinear") for n in proto.graph.node)


def output_step(proto, name: str) -> float | None:
    """The quantization step of a graph output: the scale of the DequantizeLinear that makes it, or one
    integer unit for an output of a QuantizeLinear / QLinear op; None for a float output made otherwise."""
    from onnx import numpy_helper

    for node in proto.graph.node:
        if name not in node.output:
            continue
        if node.op_type == "DequantizeLinear":
            scale = next((i for i in proto.graph.initializer if i.name == node.input[1]), None)
            return None if scale is None else float(numpy_helper.to_array(scale).max())
        if node.op_type in ("QuantizeLinear", "QGemm") or node.op_type.startswith("QLinear"):
            return 1.0
    return None
