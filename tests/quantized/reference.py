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
