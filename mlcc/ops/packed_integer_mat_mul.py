"""PackedIntegerMatMul (internal, domain "mlcc"): a MatMulInteger by constant 8-bit weights and the float
scaling after it in a dynamically quantized model (onnxruntime.quantization.quantize_dynamic, com.microsoft
DynamicQuantizeMatMul), one step through qs8-packed's dequantizing forms (mlcc_qs8_packed_gemm_f32 / _s32,
runtime_c/include/mlcc/kernels/qs8-packed.h) on weights packed in panels at build time; made by
passes/fuse_integer_matmul.

  acc[i][j] = sum_p (a[i][p] - a_zero) * w[j][p]          exact in int32; a_zero costs a_zero * sums[j]
  y[i][j]   = acc                                         (no Cast after the MatMulInteger: int32)
            = ((float)acc * scale[0 or j]) + bias[j]      the graph's Cast, Mul and Add, in its order

Inputs: a ([..., k], uint8 or int8, its rows flattened), w (int8 [n, k]: B transposed with B's zero point
subtracted), a_zero (one value of a's type, run-time or constant, or absent), scale (float32, one value or one
per column, or absent), bias (constant float32 [n], or absent). Attribute: a_flip (128 for uint8 a, else 0).
"""

from __future__ import annotations

import math

import numpy as np

from .. import kernels
from ..ir import Node, Value
from . import Op, register
from ._qs8 import FAMILY, packed_layout, packed_panels

DOMAIN = "mlcc"


def _widens_weights(target, name: str) -> bool:
    """Does the target's form of `name` widen each panel's weights into a workspace (manifest `widens_weights`)?"""
    chosen = kernels.kernel(target, name)
    return any(row["name"] == name and row["file"] == chosen.file and row.get("widens_weights")
               for row in kernels.family(chosen.family).data["kernel"])


@register
class PackedIntegerMatMul(Op):
    op_type = "PackedIntegerMatMul"
    domain = DOMAIN
    vector_families = ("qs8-packed",)
    variable_extents = True  # the rows may vary at run time (k and n are the weights')

    def reference(self, node: Node, inputs):
        a, w, a_zero, scale, bias = (inputs + [None] * 5)[:5]
        k = w.shape[1]
        rows = a.reshape(-1, k).astype(np.int64) - (0 if a_zero is None else int(np.asarray(a_zero).reshape(-1)[0]))
        acc = (rows @ w.astype(np.int64).T).astype(np.int32)
        y = node.outputs[0]
        if y.dtype == np.int32:
            return [acc.reshape(y.shape)]
        out = acc.astype(np.float32)
        if scale is not None:
            out = out * np.asarray(scale, np.float32).reshape(-1)
        if bias is not None:
            out = out + np.asarray(bias, np.float32)
        return [out.astype(np.float32).reshape(y.shape)]

    def lower(self, node: Node, ctx) -> None:
        a, w, a_zero, scale, bias = (node.inputs + [None] * 5)[:5]
        y = node.outputs[0]
        n, k = w.shape
        floats = y.dtype == np.float32
        name = "mlcc_qs8_packed_gemm_f32" if floats else "mlcc_qs8_packed_gemm_s32"
        packed = packed_panels(w.data, packed_layout(ctx.target, name))
        weights = ctx.constant(Value(f"{w.name}_packed", np.dtype(np.int8), packed.shape, packed))
        ctx.use_kernels(FAMILY)  # qs8-packed.h's structs live in qs8-gemm.h
        gemm = ctx.kernel(name)
        work = "NULL"
        if _widens_weights(ctx.target, name) and ctx.target.memory_policy != "size":  # else the reference's code
            work = ctx.scratch(256 * -(-k // 8), "widened_weights", dtype=np.int16)  # mlcc_qs8_packed_dequant_work_bytes
        rows = math.prod(a.shape[:-1])  # a run-time count where a's leading dims vary
        a_bytes = ctx.ptr(a) if a.dtype == np.uint8 else f"(const uint8_t *){ctx.ptr(a)}"  # the kernels read bytes
        ctx.emit("ops/packed_integer_matmul.c.j2", gemm=gemm, work=work, m=rows, n=n, k=k, a=a_bytes,
                 a_flip=int(node.attrs["a_flip"]), w=weights, y=ctx.ptr(y),
                 a_zero=f"{ctx.ptr(a_zero)}[0]" if a_zero is not None else "0",  # int8 or uint8: to int32 as it is
                 scale=ctx.ptr(scale) if scale is not None else "NULL",
                 scale_step=int(scale is not None and scale.size > 1),
                 bias=ctx.ptr(bias) if bias is not None else "NULL")

    def flops(self, node: Node) -> int:
        return 2 * node.outputs[0].size * node.inputs[1].shape[1]
