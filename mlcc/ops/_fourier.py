"""The discrete Fourier transform shared by DFT and STFT: templates/ops/dft.c.j2 transforms "lines" of a
tensor, one at a time, in a scratch buffer of L complex values.

A line is gathered into the buffer (zero-padded or truncated to L, times a window when given; for an
inverse of a one-sided spectrum, extended to the full Hermitian spectrum), transformed, and its first
`n_out` bins stored (only real parts for a real output), scaled by 1/L for an inverse. Lengths that are
powers of two take an in-place radix-2 FFT (bit-reversal permutation, then log2(L) butterfly stages);
others a direct O(L^2) sum. Both read one table of twiddles e^(-+2 pi i t / L), computed here in double and
stored in the signal's type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value

DTYPES = (np.float32, np.float64)


@dataclass
class Lines:
    """Lines (a, b) for a < count[0], b < count[1]; a line's element j sits at base + a * stride_a +
    b * stride_b + j * step (then + 1 for an imaginary part), in the source and in the destination."""
    count: tuple[int, int]
    src: tuple[int, int, int]  # stride_a, stride_b, step
    dst: tuple[int, int, int]


@dataclass
class Transform:
    length: int  # L, the DFT length
    n_in: int  # source elements per line (only min(n_in, L) are read; the rest is zero)
    n_out: int  # bins stored per line
    inverse: bool
    complex_in: bool
    complex_out: bool
    hermitian: bool  # the source is bins 0..L/2 of a real signal's spectrum (inverse of a one-sided DFT)


def twiddles(length: int, inverse: bool, dtype) -> np.ndarray:
    """[L, 2]: cos and sin of -+2 pi t / L (the sign + for an inverse)."""
    angle = (1.0 if inverse else -1.0) * 2.0 * np.pi * np.arange(length, dtype=np.float64) / length
    return np.stack([np.cos(angle), np.sin(angle)], axis=-1).astype(dtype)


def is_power_of_two(n: int) -> bool:
    return n >= 2 and n & (n - 1) == 0


def bit_reversal(length: int) -> list[int]:
    bits = length.bit_length() - 1
    return [int(format(i, f"0{bits}b")[::-1], 2) for i in range(length)]


def check_dtype(node: Node, x: Value) -> None:
    if x.dtype not in DTYPES:
        raise UnsupportedError(f"{node.op_type} of {x.type_str()} (float32 and float64)", node.where())


def emit_dft(node: Node, ctx, x: Value, y: Value, lines: Lines, t: Transform, window: Value | None = None) -> None:
    if t.length < 1:
        raise UnsupportedError(f"{node.op_type} of length {t.length}", node.where())
    c_type = ctx.c_type(x)
    table = Value(f"{node.name}_twiddles{t.length}", np.dtype(x.dtype), (t.length, 2), twiddles(t.length, t.inverse, x.dtype))
    radix2 = is_power_of_two(t.length)
    copied = min(t.n_in, t.length)
    ctx.emit("ops/dft.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), c_type=c_type, lines=lines, t=t,
             buf=ctx.scratch(2 * t.length * np.dtype(x.dtype).itemsize, "line", dtype=x.dtype),
             tw=ctx.constant(table), window=ctx.ptr(window) if window is not None else None,
             copied=copied, half_end=min(t.n_in, (t.length + 1) // 2),
             nyquist=t.length // 2 if t.length % 2 == 0 and t.length // 2 < t.n_in else 0,
             rev=ctx.static_array("bit_reversal", "uint32_t", bit_reversal(t.length)) if radix2 else None)


def flops(t: Transform, lines: int) -> int:
    n = t.length
    per_line = 5 * n * max(1, n.bit_length() - 1) if is_power_of_two(n) else 8 * n * t.n_out
    return lines * per_line
