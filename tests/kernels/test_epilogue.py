"""The fused epilogue, y = activation(sum + residual), through the generated C of Gemm, MatMul and Conv on
every target. The ops' lowerings are handed an Epilogue as passes/fuse_epilogues does; the residual is the
op's own first input (square products, same-shape convolutions), so no graph surgery is needed; results
are compared with numpy. Tolerance rtol=1e-4, atol=1e-4: sums of up to ~300 products in another order,
libm's exp/tanh/erf against numpy's in float64.
"""

import math

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

from mlcc.ops import gemm as gemm_module, lookup, mat_mul as mat_mul_module
from mlcc.ops._gemm import Epilogue, emit_gemm
from tests.golden import check_model, node_model, rand

TOL = dict(rtol=1e-4, atol=1e-4)
_erf = np.vectorize(math.erf)

# kind -> (a, b, numpy definition)
ACTIVATIONS = {
    "none": (0.0, 0.0, lambda x, a, b: x),
    "relu": (0.0, 0.0, lambda x, a, b: np.maximum(x, 0)),
    "clip": (-0.5, 0.75, lambda x, a, b: np.clip(x, a, b)),
    "leaky_relu": (0.1, 0.0, lambda x, a, b: np.where(x < 0, a * x, x)),
    "sigmoid": (0.0, 0.0, lambda x, a, b: 1 / (1 + np.exp(-x))),
    "hard_sigmoid": (0.2, 0.5, lambda x, a, b: np.clip(a * x + b, 0, 1)),
    "hard_swish": (0.0, 0.0, lambda x, a, b: x * np.clip(x / 6 + 0.5, 0, 1)),
    "silu": (0.0, 0.0, lambda x, a, b: x / (1 + np.exp(-x))),
    "tanh": (0.0, 0.0, lambda x, a, b: np.tanh(x)),
    "gelu_erf": (0.0, 0.0, lambda x, a, b: 0.5 * x * (1 + _erf(x / math.sqrt(2)))),
    "gelu_tanh": (0.0, 0.0,
                  lambda x, a, b: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
}


def _expected(model, feeds, kind, with_residual):
    a, b, fn = ACTIVATIONS[kind]
    (plain,) = ReferenceEvaluator(model).run(None, feeds)
    first = feeds[model.graph.node[0].input[0]]
    return {"y": fn(plain.astype(np.float64) + (first if with_residual else 0), a, b).astype(np.float32)}


def _epilogue(kind, residual=None, rs=0, cs=0, batch=0):
    a, b, _ = ACTIVATIONS[kind]
    return Epilogue(kind, a, b, residual=residual, residual_rs=rs, residual_cs=cs, residual_batch_stride=batch)


def _patch_products(monkeypatch, kind, with_residual, rs, batch=0):
    """Gemm and MatMul render through emit_gemm: hand it an epilogue whose residual is A itself."""
    def emit(ctx, m, n, k, a, b, out, **kw):
        residual = (a.value, rs, 1, batch) if with_residual else ()
        emit_gemm(ctx, m, n, k, a, b, out, **{**kw, "epilogue": _epilogue(kind, *residual)})

    monkeypatch.setattr(gemm_module, "emit_gemm", emit)
    monkeypatch.setattr(mat_mul_module, "emit_gemm", emit)


@pytest.mark.parametrize("kind", list(ACTIVATIONS))
@pytest.mark.parametrize("b_const", [True, False], ids=["B-const", "B-input"])
def test_gemm_epilogue(kind, b_const, target, tmp_path, monkeypatch):
    m, n = 13, 37  # k = n: A is also the residual
    a_, b_, c_ = rand(m, n), rand(n, n, seed=1), rand(n, seed=2)
    inputs = {"a": a_} if b_const else {"a": a_, "b": b_}
    inits = {"b": b_, "c": c_} if b_const else {"c": c_}
    model = node_model("Gemm", inputs, ["y"], {"_order": ["a", "b", "c"]}, initializers=inits)
    with_residual = kind != "relu"
    _patch_products(monkeypatch, kind, with_residual, n)
    check_model(model, inputs, target, tmp_path, expected=_expected(model, inputs, kind, with_residual), **TOL)


@pytest.mark.parametrize("b_const", [True, False], ids=["B-const", "B-input"])
def test_batched_matmul_epilogue(b_const, target, tmp_path, monkeypatch):
    batch, m, n = 3, 5, 19
    a_, b_ = rand(batch, m, n), rand(batch, n, n, seed=1)
    inputs = {"a": a_} if b_const else {"a": a_, "b": b_}
    model = node_model("MatMul", inputs, ["y"], {"_order": ["a", "b"]}, initializers={"b": b_} if b_const else {})
    _patch_products(monkeypatch, "hard_swish", True, n, m * n)
    check_model(model, inputs, target, tmp_path, expected=_expected(model, inputs, "hard_swish", True), **TOL)


# (channels, groups, kernel, pads): pointwise, im2col, grouped im2col, depthwise
CONVS = [(8, 1, 1, 0), (6, 1, 3, 1), (8, 2, 3, 1), (8, 8, 3, 1)]


@pytest.mark.parametrize("channels,groups,kernel,pad", CONVS, ids=["pointwise", "im2col", "grouped", "depthwise"])
@pytest.mark.parametrize("kind", ["relu", "gelu_tanh"])
def test_conv_epilogue(channels, groups, kernel, pad, kind, target, tmp_path, monkeypatch):
    images, h, w = 2, 7, 9
    x, wt = rand(images, channels, h, w), rand(channels, channels // groups, kernel, kernel, seed=1)
    model = node_model("Conv", {"x": x}, ["y"], {"group": groups, "pads": [pad] * 4},
                       initializers={"w": wt, "b": rand(channels, seed=2)})
    with_residual = kind == "relu"
    residual = (h * w, 1, channels * h * w) if with_residual else (0, 0, 0)
    conv = type(lookup("Conv"))
    lower = conv.lower

    def lower_with_epilogue(self, node, ctx):
        lower(self, node, ctx, epilogue=_epilogue(kind, node.inputs[0] if with_residual else None, *residual))

    monkeypatch.setattr(conv, "lower", lower_with_epilogue)
    # the residual strides above are channels-first: keep the convolution NCHW on every target
    check_model(model, {"x": x}, target, tmp_path, expected=_expected(model, {"x": x}, kind, with_residual),
                disabled_passes=("choose_layout",), **TOL)
