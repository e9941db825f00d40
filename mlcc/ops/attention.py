"""Attention (opset 23): y = softmax(scale * Q K^T + mask) V on the f32-attention kernel (ops/_attention.py),
the same one mlcc.FusedAttention uses.

Q, K, V are [batch, heads, seq, head_size], or [batch, seq, heads * head_size] with q_num_heads and
kv_num_heads: those are read in place as heads. Key/value heads may be fewer than query heads (grouped
query attention). attn_mask is boolean (true attends) or added to the scores, broadcast to
[batch, q_heads, q_seq, keys]; keys past its last column are masked, as are keys after the query with
is_causal. A query whose keys are all masked gets zeros (the ONNX definition). Forms with a KV cache
(past_key/past_value, nonpad_kv_seqlen), softcap or outputs besides Y are left to the op's function body.
"""

from __future__ import annotations

import numpy as np
import onnx

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._attention import Attention as Description, Strided, broadcast_strides, flops, lower


def _heads(value: Value, heads: int | None, node: Node) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
    """(dims, strides) of Q, K, V or Y as [batch, head, seq, head_size]."""
    if len(value.shape) == 4:
        b, h, s, d = value.shape
        return (b, h, s, d), (h * s * d, s * d, d, 1)
    if len(value.shape) != 3 or not heads or value.shape[2] % heads:
        raise UnsupportedError(f"{value.name!r} of shape {list(value.shape)} does not split into "
                               f"{heads} heads", node.where())
    b, s, hidden = value.shape
    d = hidden // heads
    return (b, heads, s, d), (s * hidden, d, hidden, 1)


def describe(node: Node) -> Description:
    q, k, v, mask = node.inputs[0], node.inputs[1], node.inputs[2], node.input(3)
    (batch, heads, q_len, qk_dim), q_strides = _heads(q, node.attrs.get("q_num_heads"), node)
    (_, kv_heads, kv_len, _), k_strides = _heads(k, node.attrs.get("kv_num_heads"), node)
    (_, _, _, v_dim), v_strides = _heads(v, node.attrs.get("kv_num_heads"), node)
    _, y_strides = _heads(node.outputs[0], node.attrs.get("q_num_heads"), node)
    if heads % kv_heads:
        raise UnsupportedError(f"{heads} query heads do not group over {kv_heads} key/value heads", node.where())
    scale = node.attrs.get("scale")
    attention = Description(
        q=Strided(q, 0, q_strides), k=Strided(k, 0, k_strides), v=Strided(v, 0, v_strides),
        y=Strided(node.outputs[0], 0, y_strides), dims=(batch, heads, q_len, kv_len, qk_dim, v_dim),
        scale=1.0 / np.sqrt(qk_dim) if scale is None else float(scale), kv_group=heads // kv_heads,
        causal=bool(node.attrs.get("is_causal", 0)), zero_masked_rows=True)
    if mask is not None:
        cols = mask.shape[-1] if mask.shape else 1
        strides = broadcast_strides(mask.shape, (batch, heads, q_len, cols))
        if strides is None or cols > kv_len:
            raise UnsupportedError(f"attn_mask of shape {list(mask.shape)} does not broadcast to "
                                   f"[{batch}, {heads}, {q_len}, {kv_len}]", node.where())
        masked = Strided(mask, 0, strides)
        if mask.dtype == np.bool_:
            attention.keep_mask = masked
        else:
            attention.add_mask = masked
        attention.mask_cols = cols
    return attention


@register
class Attention(Op):
    op_type = "Attention"
    attrs = {"is_causal": 0, "kv_num_heads": None, "q_num_heads": None, "qk_matmul_output_mode": 0,
             "scale": None, "softcap": 0.0, "softmax_precision": None}

    def prefers_function(self, proto: onnx.NodeProto, opset: int) -> bool:
        given = {a.name: onnx.helper.get_attribute_value(a) for a in proto.attribute}
        return (any(proto.output[1:]) or any(proto.input[4:]) or given.get("softcap", 0.0) != 0.0
                or any(given.get(name, -1) != -1 for name in ("left_window_size", "right_window_size")))

    def lower(self, node: Node, ctx) -> None:
        lower(describe(node), node, ctx)

    def flops(self, node: Node) -> int:
        return flops(describe(node))
