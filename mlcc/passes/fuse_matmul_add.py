"""MatMul + Add of a constant bias -> one Gemm, so the bias is added as the product is written.

The MatMul's output must be read by the Add alone, B must be 2-D and everything float32 (Gemm's kernel).
A 2-D A makes an ONNX Gemm (the bias may be anything Gemm's C broadcasts); an N-D A (a transformer's
Linear layer over [batch, tokens, features]) makes a Gemm over A's rows flattened, which mlcc/ops/gemm.py
accepts as an internal extension, with a bias along the last axis only. Transposes simplify_algebra folded
into the MatMul (`_trans_a`, `_trans_b`) become transA and transB.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node, Value
from ._rewrite import Rewriter


def run(graph: Graph) -> dict:
    rw = Rewriter(graph)
    fused = batched = 0
    for add in list(graph.nodes):
        if add.op_type != "Add" or add.domain or len(add.inputs) != 2:
            continue
        for side in (0, 1):
            mm = rw.produced_by(add.inputs[side], {"MatMul"})
            bias = (_bias(mm, add.inputs[1 - side], add.outputs[0], rw)
                    if mm is not None and rw.sole_consumer(mm.outputs[0]) is add else None)
            if bias is None:
                continue
            batched += len(mm.inputs[0].shape) > 2
            mm.op_type = "Gemm"
            mm.attrs = {"alpha": 1.0, "beta": 1.0, "transA": int(mm.attrs.get("_trans_a", 0)),
                        "transB": int(mm.attrs.get("_trans_b", 0))}
            mm.inputs = [mm.inputs[0], mm.inputs[1], bias]
            mm.outputs = [add.outputs[0]]
            rw.drop(add)
            fused += 1
            break
    rw.finish()
    return {"fused": fused, "batched_rows": batched}


def _bias(mm: Node, bias: Value, out: Value, rw: Rewriter) -> Value | None:
    """The Add's other operand as Gemm's C, or None when the pair does not make a Gemm."""
    a, b, product = mm.inputs[0], mm.inputs[1], mm.outputs[0]
    if (len(b.shape) != 2 or len(a.shape) < 2 or not bias.is_const or out.shape != product.shape
            or any(v.dtype != np.float32 for v in (a, b, bias, out))):
        return None
    if len(a.shape) == 2:  # the Add kept the product's shape, so the bias has rank 2 at most
        return bias
    if mm.attrs.get("_trans_a", 0):  # the flattened rows must be A's own rows
        return None
    last = bias.shape[-1] if bias.shape else 1
    if bias.size != last:  # varies along some axis other than the last
        return None
    return bias if len(bias.shape) == 1 else rw.constant(f"{bias.name}_row", bias.data.reshape(last))
