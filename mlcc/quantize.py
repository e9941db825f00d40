"""`mlcc quantize`: static QDQ quantization through onnxruntime.quantization (the optional extra
`mlcc[quantize]`), and how far the int8 model's outputs land from the fp32 model's on the calibration data.

Calibration data is an .npz keyed by the model's input names. Each array holds calibration samples stacked
along the input's first axis: for an input [1, 3, 32, 32], an array [16, 3, 32, 32] is 16 batches of one
(for a fixed first dim d, the array's first dim is a multiple of d; for a symbolic one, each row is a
batch). The other dims must match where the model fixes them, and every input must give as many batches.

onnxruntime pre-processes the model (shape inference, its basic graph optimisations such as folding
BatchNormalization into Conv), calibrates (min/max of each activation over the batches), picks scales and zero points, and
writes QuantizeLinear/DequantizeLinear pairs: 8-bit activations (uint8 by default, asymmetric), int8
symmetric weights per output channel by default, int32 biases - the form mlcc's int8 path compiles into
integer kernels (passes/lower_quantized_islands). Both models then run in onnxruntime with graph
optimisation off (its fused int8 kernels can saturate on AVX2: issue 21), batch by batch.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx

from .errors import ModelLoadError, UnsupportedError, UsageError
from .frontend import load_model

ACTIVATIONS = ("uint8", "int8")


@dataclass
class OutputError:
    name: str
    shape: tuple[int, ...]  # of one batch
    max_abs: float
    mean_abs: float
    top1: tuple[int, int] | None = None  # (rows whose argmax agrees, rows) for a [rows, classes] output


@dataclass
class Quantized:
    out_path: Path
    batches: int
    fp32_weights_bytes: int
    int8_weights_bytes: int
    outputs: list[OutputError] = field(default_factory=list)


def _ort():
    try:
        import onnxruntime
        from onnxruntime import quantization
    except ImportError:
        raise UnsupportedError("mlcc quantize needs onnxruntime: pip install 'mlcc[quantize]'") from None
    return onnxruntime, quantization


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    constants = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in constants]


def _dims(info: onnx.ValueInfoProto) -> list[int | None]:
    """The input's dims, None where symbolic or unset."""
    return [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in info.type.tensor_type.shape.dim]


def calibration_batches(model: onnx.ModelProto, path: Path) -> list[dict[str, np.ndarray]]:
    """The calibration data as a list of feeds, one per batch (see the module's docstring); every mismatch
    with the model's inputs is a UsageError naming the input."""
    where = f"--calibration {str(path)!r}"
    if not path.is_file():
        raise UsageError("no such file", where)
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except Exception as exc:  # zipfile, pickle and format errors alike
        raise UsageError(f"cannot read as .npz ({type(exc).__name__})", where) from None
    inputs = _graph_inputs(model)
    names = [i.name for i in inputs]
    missing, extra = [n for n in names if n not in arrays], [k for k in arrays if k not in names]
    if missing or extra:
        said = "; ".join(part for part in (f"no array for input(s) {', '.join(map(repr, missing))}" if missing else "",
                                           f"unknown key(s) {', '.join(map(repr, extra))}" if extra else "") if part)
        raise UsageError(f"{said} (the model's inputs: {', '.join(map(repr, names))})", where)
    counts, split = {}, {}
    for info in inputs:
        a, dims = arrays[info.name], _dims(info)
        elem = info.type.tensor_type.elem_type
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(elem)) if elem else a.dtype
        at = f"{where}: input {info.name!r}"
        if not dims:
            raise UnsupportedError("calibration of a scalar input is not supported (batches stack along axis 0)", at)
        if a.ndim != len(dims) or any(d is not None and n != d for n, d in zip(a.shape[1:], dims[1:])):
            want = ", ".join("N" if i == 0 else "?" if d is None else str(d) for i, d in enumerate(dims))
            raise UsageError(f"shape {list(a.shape)} does not fit the input's [{want}] (batches stacked along axis 0)", at)
        first = dims[0] or 1
        if a.shape[0] == 0 or a.shape[0] % first:
            raise UsageError(f"{a.shape[0]} rows along axis 0 is not a positive multiple of the input's {first}", at)
        if a.dtype != dtype:
            if not (a.dtype.kind == dtype.kind == "f"):
                raise UsageError(f"dtype {a.dtype.name}, the input is {dtype.name}", at)
            a = a.astype(dtype)
        counts[info.name], split[info.name] = a.shape[0] // first, np.split(a, a.shape[0] // first)
    if len(set(counts.values())) > 1:
        raise UsageError(f"inputs give different numbers of batches: {counts}", where)
    return [{name: parts[i] for name, parts in split.items()} for i in range(next(iter(counts.values())))]


def _weights_bytes(model: onnx.ModelProto) -> int:
    return sum(onnx.numpy_helper.to_array(t).nbytes for t in model.graph.initializer)


def quantize(model_path: str | os.PathLike, calibration: str | os.PathLike, out_path: str | os.PathLike,
             per_channel: bool = True, activations: str = "uint8") -> Quantized:
    """Quantize `model_path` to QDQ int8 at `out_path` (written only when everything succeeded) and measure
    its outputs against the fp32 model's on the calibration batches."""
    if activations not in ACTIVATIONS:
        raise UsageError(f"--activations must be one of {', '.join(ACTIVATIONS)}, not {activations!r}")
    ort, q = _ort()
    model_path, out_path = Path(model_path), Path(out_path)
    model = load_model(model_path)
    batches = calibration_batches(model, Path(calibration))

    class Reader(q.CalibrationDataReader):
        def __init__(self):
            self.pending = iter(batches)

        def get_next(self):
            return next(self.pending, None)

    with tempfile.TemporaryDirectory(prefix="mlcc-quantize-") as tmp:
        prepared, made = Path(tmp) / "model.prepared.onnx", Path(tmp) / "model.int8.onnx"
        try:
            # the library's recommended first step: shapes inferred, BatchNormalization folded into Conv, ...
            from onnxruntime.quantization.shape_inference import quant_pre_process

            quant_pre_process(str(model_path), str(prepared))
            q.quantize_static(str(prepared), str(made), Reader(), quant_format=q.QuantFormat.QDQ,
                              per_channel=per_channel, weight_type=q.QuantType.QInt8,
                              activation_type=q.QuantType.QUInt8 if activations == "uint8" else q.QuantType.QInt8)
        except Exception as exc:  # the library's own failures on a model it cannot handle
            text = " ".join(str(exc).split())[:300] or type(exc).__name__
            raise ModelLoadError(f"onnxruntime.quantization could not quantize it: {text}", str(model_path)) from None
        int8 = onnx.load(str(made))
        outputs = _compare(ort, model, int8, batches)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(made, out_path)
    return Quantized(out_path, len(batches), _weights_bytes(model), _weights_bytes(int8), outputs)


def _session(ort, model: onnx.ModelProto):
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _compare(ort, fp32: onnx.ModelProto, int8: onnx.ModelProto, batches: list[dict]) -> list[OutputError]:
    a, b = _session(ort, fp32), _session(ort, int8)
    names = [o.name for o in a.get_outputs()]
    got = {n: [] for n in names}
    want = {n: [] for n in names}
    for feed in batches:
        for name, x, y in zip(names, a.run(names, feed), b.run(names, feed)):
            want[name].append(np.asarray(x))
            got[name].append(np.asarray(y))
    errors = []
    for name in names:
        if not np.issubdtype(want[name][0].dtype, np.floating):
            continue  # an integer output (class labels) has no error to measure
        x = np.stack(want[name]).astype(np.float64)
        y = np.stack(got[name]).astype(np.float64)
        diff = np.abs(x - y)
        e = OutputError(name, tuple(want[name][0].shape), float(diff.max(initial=0.0)), float(diff.mean()) if diff.size else 0.0)
        if x.ndim == 3 and x.shape[-1] > 1:  # batches x [rows, classes]: classifier-shaped
            agree = np.argmax(x, axis=-1) == np.argmax(y, axis=-1)
            e.top1 = (int(agree.sum()), int(agree.size))
        errors.append(e)
    return errors


def summary(model_path: str, q: Quantized, per_channel: bool, activations: str) -> list[str]:
    weights = "per channel" if per_channel else "per tensor"
    lines = [f"quantized {model_path} -> {q.out_path} (QDQ: {activations} activations, int8 weights {weights}; "
             f"calibrated on {q.batches} batch(es))",
             f"  weights: {q.fp32_weights_bytes} B fp32 -> {q.int8_weights_bytes} B int8 "
             f"({q.int8_weights_bytes / max(q.fp32_weights_bytes, 1):.2f}x)"]
    for e in q.outputs:
        top1 = f", top-1 agreement {e.top1[0]}/{e.top1[1]} ({100 * e.top1[0] / e.top1[1]:.1f}%)" if e.top1 else ""
        lines.append(f"  output {e.name!r} {list(e.shape)} against fp32 on the calibration data: "
                     f"max abs err {e.max_abs:.4g}, mean abs err {e.mean_abs:.4g}{top1}")
    return lines
