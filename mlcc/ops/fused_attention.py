"""mlcc.FusedAttention: y = softmax(scale * Q K^T + mask) V in one node, made by passes/recognise_attention
from the MatMul, scale, mask, Softmax, MatMul chain exporters write (ONNX's own Attention op, opset 23,
lowers onto the same kernel: ops/attention.py).

An internal op (domain "mlcc") rather than ONNX's Attention because it describes its operands more freely:
each of q, k, v and y is a tensor read or written in place through an element offset and strides over the
logical dims (attributes `q`, `k`, `v`, `y`: [offset, batch, head, row, col strides]), so the Transposes,
Reshapes and Gathers that split and merge heads around an exported attention are absorbed instead of
copied. Inputs: q, k, v, then optionally an additive float mask and a boolean keep mask (each with its own
`add_mask` / `keep_mask` strides over [batch, head, query, key]); a key whose keep mask differs from
`keep_when` gets the score `fill` (a Where(mask, scores, fill) before the Softmax). Attributes `dims`
[batch, heads, q_len, kv_len, qk_dim, v_dim] and `kv_group` (query heads per key/value head) give the
sizes. The f32-attention kernel never makes the [batch, heads, q_len, kv_len] scores: one block of queries'
scores lives in scratch at a time.
"""

from __future__ import annotations

import numpy as np

from ..cexpr import is_variable
from ..ir import Node
from . import REQUIRED, Op, register
from ._attention import Attention, Strided, flops, lower

DOMAIN = "mlcc"


def _whole(x):
    """An attribute's whole number, or its run-time size (cexpr.Sym) while lowering at run-time extents."""
    return x if is_variable(x) else int(x)


def describe(node: Node) -> Attention:
    a = node.attrs
    strided = lambda i, name: None if node.input(i) is None else Strided(node.inputs[i], _whole(a[name][0]), tuple(_whole(s) for s in a[name][1:]))
    return Attention(q=strided(0, "q"), k=strided(1, "k"), v=strided(2, "v"),
                     y=Strided(node.outputs[0], _whole(a["y"][0]), tuple(_whole(s) for s in a["y"][1:])),
                     dims=tuple(_whole(d) for d in a["dims"]), scale=float(a["scale"]), kv_group=int(a["kv_group"]),
                     add_mask=strided(3, "add_mask"), keep_mask=strided(4, "keep_mask"),
                     keep_when=bool(a["keep_when"]), fill=float(a["fill"]), causal=bool(a["causal"]))


@register
class FusedAttention(Op):
    op_type = "FusedAttention"
    vector_families = ("f32-attention",)
    domain = DOMAIN
    variable_extents = True  # the kernel takes its sizes and strides at run time; scratch for the maxima
    attrs = {"dims": REQUIRED, "kv_group": 1, "q": REQUIRED, "k": REQUIRED, "v": REQUIRED, "y": REQUIRED,
             "add_mask": None, "keep_mask": None, "scale": 1.0, "keep_when": 1, "fill": float("-inf"), "causal": 0}

    def reference(self, node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        attention = describe(node)
        y = attention.reference(*inputs[:3], *(inputs[3:5] + [None, None])[:2])
        return [attention.write(y, node.outputs[0].shape)]

    def lower(self, node: Node, ctx) -> None:
        lower(describe(node), node, ctx)

    def flops(self, node: Node) -> int:
        return flops(describe(node))
