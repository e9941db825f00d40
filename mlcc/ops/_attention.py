"""What mlcc.FusedAttention and ONNX Attention share: the description of one scaled dot-product attention
over strided operands, its numpy oracle, and its lowering onto the f32-attention kernel
(runtime_c/include/mlcc/kernels/f32-attention.h).

Each operand is a tensor read (or, for y, written) in place at an element offset through strides over its
logical dims [batch, head, row, col]: q [batch, heads, q_len, qk_dim], k [batch, kv_heads, kv_len, qk_dim],
v [batch, kv_heads, kv_len, v_dim], y [batch, heads, q_len, v_dim], masks [batch, heads, q_len, keys].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import cexpr
from ..errors import UnsupportedError
from ..ir import Node, Value
from ._gemm import packed_size, use_tile

SCORES_BUDGET = 1 << 16  # floats of scores a block of queries may take


@dataclass
class Strided:
    value: Value
    offset: int
    strides: tuple[int, int, int, int]

    def read(self, data: np.ndarray, dims: tuple[int, int, int, int]) -> np.ndarray:
        flat = np.ascontiguousarray(data).reshape(-1)[self.offset:]
        return np.lib.stride_tricks.as_strided(flat, dims, [s * flat.itemsize for s in self.strides], writeable=False)

    def pointer(self, ctx) -> str:
        return cexpr.offset(ctx.ptr(self.value), (self.offset, 1))


@dataclass
class Attention:
    q: Strided
    k: Strided
    v: Strided
    y: Strided
    dims: tuple[int, int, int, int, int, int]  # batch, heads, q_len, kv_len, qk_dim, v_dim
    scale: float
    kv_group: int = 1
    add_mask: Strided | None = None
    keep_mask: Strided | None = None
    mask_cols: int | None = None  # keys the masks cover (the rest are masked); None: all
    keep_when: bool = True
    fill: float = float("-inf")
    causal: bool = False
    zero_masked_rows: bool = False

    def reference(self, q, k, v, add_mask=None, keep_mask=None) -> np.ndarray:
        """y as [batch, heads, q_len, v_dim] (float32 like the kernel's inputs, float64 accumulation)."""
        batch, heads, q_len, kv_len, qk_dim, v_dim = self.dims
        kv_heads = heads // self.kv_group
        qq = self.q.read(q, (batch, heads, q_len, qk_dim)).astype(np.float64)
        kk = np.repeat(self.k.read(k, (batch, kv_heads, kv_len, qk_dim)), self.kv_group, axis=1).astype(np.float64)
        vv = np.repeat(self.v.read(v, (batch, kv_heads, kv_len, v_dim)), self.kv_group, axis=1).astype(np.float64)
        s = self.scale * qq @ kk.swapaxes(-1, -2)
        cols = kv_len if self.mask_cols is None else min(self.mask_cols, kv_len)
        masked = np.zeros(s.shape, bool)
        if add_mask is not None:
            s[..., :cols] += self.add_mask.read(add_mask, (batch, heads, q_len, cols))
        if keep_mask is not None:
            masked[..., :cols] |= self.keep_mask.read(keep_mask, (batch, heads, q_len, cols)) != self.keep_when
        if add_mask is not None or keep_mask is not None:
            masked[..., cols:] = True
        if self.causal:
            masked |= np.triu(np.ones((q_len, kv_len), bool), 1)
        s[masked] = self.fill
        with np.errstate(invalid="ignore", over="ignore"):
            peak = s.max(axis=-1, keepdims=True) if kv_len else s
            e = np.exp(s - peak)
            p = e / e.sum(axis=-1, keepdims=True)
            if self.zero_masked_rows:
                p = np.where(np.isneginf(peak), 0.0, p)
        return (p @ vv).astype(np.float32)

    def write(self, y: np.ndarray, out_shape: tuple[int, ...]) -> np.ndarray:
        """The logical y placed into a tensor of out_shape through y's strides."""
        flat = np.zeros(int(np.prod(out_shape, dtype=np.int64)), np.float32)
        view = np.lib.stride_tricks.as_strided(flat[self.y.offset:], y.shape, [s * 4 for s in self.y.strides])
        view[...] = y
        return flat.reshape(out_shape)


def lower(attention: Attention, node: Node, ctx) -> None:
    a = attention
    batch, heads, q_len, kv_len, qk_dim, v_dim = a.dims
    for s in (a.q, a.k, a.v, a.y, a.add_mask):
        if s is not None and s.value.dtype != np.float32:
            raise UnsupportedError(f"attention on {s.value.dtype.name} is not supported (float32 only)", node.where())
    if a.y.strides[3] != 1 and v_dim > 1:
        raise UnsupportedError("attention writes rows of its output contiguously", node.where())
    tile = use_tile(ctx)
    # blocks and scratch are decided for the largest sizes: the kernel clips the last block at run time
    longest_q, longest_kv = cexpr.bound(q_len), cexpr.bound(kv_len)
    rows = max(1, min(longest_q, SCORES_BUDGET // max(longest_kv, 1)))
    if rows > tile.mr:
        rows -= rows % tile.mr
    round16 = lambda n: -(-n // 16) * 16
    work_floats = (round16(packed_size(cexpr.bound(qk_dim), longest_kv, tile.nr))
                   + round16(packed_size(longest_kv, cexpr.bound(v_dim), tile.nr)) + rows * (longest_kv + 1))
    ctx.use_kernels("f32-attention")
    strides = {"q": a.q.strides, "k": a.k.strides, "v": a.v.strides, "y": a.y.strides}
    strides.update({name: mask.strides for name, mask in (("add_mask", a.add_mask), ("keep_mask", a.keep_mask)) if mask})
    masked = a.add_mask is not None or a.keep_mask is not None or a.causal
    run_time = any(cexpr.is_variable(x) for x in [*a.dims, *(s for t in strides.values() for s in t)])
    parallel = ctx.parallel()
    ctx.emit("ops/attention.c.j2", parallel=parallel,
             kernel=ctx.kernel("mlcc_f32_attention_parallel" if parallel else "mlcc_f32_attention"),
             config=tile.config, run_time=run_time, dims=a.dims, kv_group=a.kv_group, strides=strides,
             mask_cols=kv_len if a.mask_cols is None else a.mask_cols, scale=a.scale, causal=a.causal,
             keep_when=a.keep_when, fill=a.fill if masked else None, zero_masked_rows=a.zero_masked_rows,
             block_rows=rows, q=a.q.pointer(ctx), k=a.k.pointer(ctx), v=a.v.pointer(ctx), y=a.y.pointer(ctx),
             add_mask=a.add_mask.pointer(ctx) if a.add_mask else "NULL",
             keep_mask=a.keep_mask.pointer(ctx) if a.keep_mask else "NULL",
             work=ctx.scratch(4 * work_floats, "attention"))


def flops(attention: Attention) -> int:
    batch, heads, q_len, kv_len, qk_dim, v_dim = attention.dims
    return batch * heads * q_len * kv_len * (2 * qk_dim + 2 * v_dim + 5)


def broadcast_strides(shape: tuple[int, ...], dims: tuple[int, int, int, int]) -> tuple[int, int, int, int] | None:
    """Strides reading a contiguous tensor of `shape` broadcast (numpy rules) to `dims`; None if it does not."""
    if len(shape) > 4:
        return None
    padded = (1,) * (4 - len(shape)) + tuple(shape)
    strides, step = [0, 0, 0, 0], 1
    for i in range(3, -1, -1):
        if padded[i] != 1:
            if padded[i] != dims[i]:
                return None
            strides[i] = step
        step *= padded[i]
    return tuple(strides)
