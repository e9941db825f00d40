"""Every operator mlcc claims is registered, implemented, and covered by a golden test."""

import re
from pathlib import Path

import pytest

from mlcc import ops

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
