"""Every operator mlcc claims is registered, implemented, and covered by a golden test."""

import re
from pathlib import Path

import onnx
import pytest

from mlcc import frontend, ops

# The operators issue #2 promises (float32, plus the int64/bool forms shape ops need).
CLAIMED = """
Conv ConvTranspose Gemm MatMul Add Sub Mul Div Pow Sqrt Exp Log Neg Abs Reciprocal Floor Ceil Min Max Sum
Mean Relu LeakyRelu PRelu Elu Selu Sigmoid HardSigmoid HardSwish Tanh Softplus Clip Erf Gelu Softmax
LogSoftmax MaxPool AveragePool GlobalAveragePool GlobalMaxPool BatchNormalization InstanceNormalization
LayerNormalization LRN Concat Split Reshape Flatten Transpose Squeeze Unsqueeze Slice Pad Gather Expand
Tile Where Equal Less Greater Not And Cast ReduceMean ReduceSum ReduceMax ReduceMin ArgMax Resize Upsample
DepthToSpace SpaceToDepth Shape Size Range ConstantOfShape Constant Identity Dropout
""".split()

OPS_TESTS = Path(__file__).resolve().parents[1] / "ops"


@pytest.mark.parametrize("op_type", CLAIMED)
def test_claimed_op_is_registered_and_implemented(op_type):
    op = ops.lookup(op_type)
    assert op is not None, f"{op_type} is not registered"
    assert op.can_lower or op.always_folded, f"{op_type} has no lowering"
    assert op.attrs is not None


@pytest.mark.parametrize("op_type", CLAIMED)
def test_claimed_op_has_a_golden_test(op_type):
    text = "\n".join(p.read_text() for p in OPS_TESTS.glob("test_*.py"))
    assert re.search(rf"[\"']{op_type}[\"']", text), f"no golden test in tests/ops names {op_type!r}"


def test_every_registered_op_module_imports_cleanly():
    assert len(ops.all_ops()) >= len(CLAIMED)


# Opset-1 forms no later version reads alike and onnx infers nothing for: attribute defaults that later versions
# changed or made required (Concat-1's optional axis, Clip-1's absent bounds, Selu-1's rounder constants, GRU-1's
# output_sequence). Listed exactly, so a new gap, or one closed, fails the test.
KNOWN_GAPS = {"Clip-1", "Concat-1", "GRU-1", "Selu-1"}


def _typing_gaps() -> set[str]:
    """Schema versions of registered ops the frontend cannot type: no own `infer`, no onnx inference for
    that version, no function body to infer through, and no later version of the same form that infers."""
    history: dict[str, list] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain == "":
            history.setdefault(schema.name, []).append(schema)
    gaps = set()
    for (domain, name), op in ops.all_ops().items():
        if domain or type(op).infer is not ops.Op.infer:
            continue
        for schema in history.get(name, []):
            if schema.since_version < frontend.MIN_OPSET:
                continue
            if (schema.has_type_and_shape_inference_function or schema.has_function
                    or schema.has_context_dependent_function):
                continue
            newer = ops.same_form_versions(name, "", schema.since_version)
            if not any(onnx.defs.get_schema(name, v, "").has_type_and_shape_inference_function for v in newer):
                gaps.add(f"{name}-{schema.since_version}")
    return gaps


def test_every_registered_op_types_every_schema_version():
    assert _typing_gaps() == KNOWN_GAPS
