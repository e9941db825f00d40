"""The exact integer semantics of a quantized model and the distance from it in quantization steps.

The reference is onnxruntime with graph optimisation off, which runs the graph as written: its fused int8
kernels are not the reference (on AVX2 without VNNI some saturate the vpmaddubsw pair sum)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx

from mlcc.verify import output_step, reference_outputs

FLOAT_TOLERANCE = 1e-4  # float outputs (dynamic quantization): relative to the output's largest magnitude


def reference(model: onnx.ModelProto, inputs: dict) -> dict:
    return reference_outputs(model, inputs, [o.name for o in model.graph.output], exact=True)[0]


def real_number_reference(model: onnx.ModelProto, inputs: dict) -> dict:
    """A QDQ graph evaluated over the reals: onnx's reference evaluator with every float constant in float64,
    DequantizeLinear exact in float64, QuantizeLinear rounding x / scale half to even (a float32 graph input
    divided in float32, as the operator's own type). onnxruntime's unoptimised run computes each float op in
    float32, so a value within float32 error of .5 rounds either way there, and a deep net carries such ties
    to its logits; this one has no such error (a product of 8-bit values and float32 scales is exact in
    float64, and its sums are off by about 1e-16 of their size). Default-domain ops only (no com.microsoft)."""
    from onnx import numpy_helper
    from onnx.reference import ReferenceEvaluator
    from onnx.reference.op_run import OpRun

    def along(value, x, axis):
        value = np.asarray(value)
        if value.ndim == 0 or value.size == 1:
            return value.reshape(())
        shape = [1] * x.ndim
        shape[axis % x.ndim] = value.size
        return value.reshape(shape)

    class DequantizeLinear(OpRun):
        op_domain = ""

        def _run(self, x, x_scale, x_zero_point=None, axis=1, block_size=0, output_dtype=None):
            if block_size:
                raise NotImplementedError("blocked DequantizeLinear")
            zero = 0 if x_zero_point is None else along(x_zero_point, x, axis).astype(np.float64)
            return ((x.astype(np.float64) - zero) * along(x_scale, x, axis).astype(np.float64),)

    class QuantizeLinear(OpRun):
        op_domain = ""

        def _run(self, x, y_scale, y_zero_point=None, axis=1, saturate=1, block_size=0, output_dtype=0,
                 precision=0):
            if block_size:
                raise NotImplementedError("blocked QuantizeLinear")
            dtype = np.uint8 if y_zero_point is None else np.asarray(y_zero_point).dtype
            scale = along(y_scale, x, axis).astype(x.dtype if x.dtype == np.float32 else np.float64)
            zero = 0 if y_zero_point is None else along(y_zero_point, x, axis).astype(np.float64)
            info = np.iinfo(dtype)
            return (np.clip(np.rint(x / scale).astype(np.float64) + zero, info.min, info.max).astype(dtype),)

    class BatchNormalization(OpRun):  # inference: onnx's BatchNormalization-9 uses the batch's statistics
        op_domain = ""

        def _run(self, x, scale, bias, mean, var, epsilon=1e-5, momentum=None, training_mode=0, spatial=None):
            if training_mode:
                raise NotImplementedError("BatchNormalization in training mode")
            shape = (1, -1) + (1,) * (x.ndim - 2)
            inverse = 1.0 / np.sqrt(var.reshape(shape).astype(np.float64) + epsilon)
            return ((x - mean.reshape(shape)) * inverse * scale.reshape(shape) + bias.reshape(shape),)

    real = onnx.ModelProto.FromString(model.SerializeToString())
    for init in real.graph.initializer:
        if init.data_type == onnx.TensorProto.FLOAT:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float64), init.name))
    for value in real.graph.output:
        if value.type.tensor_type.elem_type == onnx.TensorProto.FLOAT:
            value.type.tensor_type.elem_type = onnx.TensorProto.DOUBLE
    del real.graph.value_info[:]
    evaluator = ReferenceEvaluator(real, new_ops=[DequantizeLinear, QuantizeLinear, BatchNormalization])
    names = [o.name for o in model.graph.output]
    return dict(zip(names, evaluator.run(names, dict(inputs))))


@dataclass
class Distance:
    output: str
    steps: float | None  # largest difference in quantization steps; None for a float output
    max_abs: float
    exact: float  # share of bit-exact elements

    def within(self, steps: float = 1.0) -> bool:
        return self.steps <= steps + 1e-3 if self.steps is not None else self.max_abs <= self.float_bound

    float_bound: float = 0.0


def distances(model: onnx.ModelProto, got: dict, expected: dict) -> list[Distance]:
    """How far each output of `got` is from `expected`; raises AssertionError on a shape difference."""
    rows = []
    for name, want in expected.items():
        have = np.asarray(got[name])
        assert have.shape == want.shape, f"{name}: shape {have.shape} != {want.shape}"
        diff = np.abs(have.astype(np.float64) - want.astype(np.float64))
        max_abs = float(diff.max()) if diff.size else 0.0
        exact = float(np.mean(have == want)) if have.size else 1.0
        step = output_step(model, name)
        row = Distance(name, None if step is None else max_abs / step, max_abs, exact)
        if step is None:
            row.float_bound = FLOAT_TOLERANCE * max(1.0, float(np.abs(want).max()) if want.size else 1.0)
        rows.append(row)
    return rows
