"""DFT along one axis of a signal [..., 1 or 2] (real, or complex as (re, im) pairs), see _fourier.

Forms: `axis` is an attribute (default 1) before opset 20 and an input (default -2) from it; dft_length
(input 1, default the axis' size) zero-pads or truncates; onesided keeps bins 0..L/2 of a forward
transform; an inverse divides by L, and an inverse with onesided takes bins 0..L/2 of a real signal's
spectrum and gives the real signal (L defaults to 2 * (n - 1)), as numpy's irfft. Axis and length decide
the output shape: they must be known at build time.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import const_ints, normalize_axis
from ._fourier import Lines, Transform, check_dtype, emit_dft, flops


def _plan(node: Node) -> tuple[int, Transform]:
    """(axis, transform) of the node."""
    x = node.inputs[0]
    rank = len(x.shape)
    if node.opset >= 20:
        given = const_ints(node, 2, "axis")
        axis = given[0] if given else -2
    else:
        axis = int(node.attrs.get("axis", 1) if node.attrs.get("axis") is not None else 1)
    axis = normalize_axis(axis, rank, node)
    if rank < 2 or axis == rank - 1 or x.shape[-1] not in (1, 2):
        raise UnsupportedError(f"DFT of {x.type_str()} along axis {axis}: the last dim must be 1 (real) or 2 (complex) "
                               "and not the transformed one", node.where())
    inverse, onesided = bool(node.attrs["inverse"]), bool(node.attrs["onesided"])
    n_in = x.shape[axis]
    length = const_ints(node, 1, "dft_length")
    if length is not None:
        length = length[0]
    else:
        length = 2 * (n_in - 1) if inverse and onesided else n_in
    hermitian = inverse and onesided
    if hermitian and x.shape[-1] != 2:
        raise UnsupportedError("an inverse one-sided DFT needs a complex input", node.where())
    n_out = length // 2 + 1 if onesided and not inverse else length
    return axis, Transform(length, n_in, n_out, inverse, x.shape[-1] == 2, not hermitian, hermitian)


@register
class DFT(Op):
    op_type = "DFT"
    attrs = {"axis": None, "inverse": 0, "onesided": 0}

    def infer(self, node: Node):
        x = node.inputs[0]
        axis, t = _plan(node)
        shape = list(x.shape)
        shape[axis], shape[-1] = t.n_out, 2 if t.complex_out else 1
        return [(x.dtype, tuple(shape))]

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        check_dtype(node, x)
        axis, t = _plan(node)
        outer, inner = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis + 1:-1]))
        c_in, c_out = x.shape[-1], y.shape[-1]
        lines = Lines((outer, inner), (t.n_in * inner * c_in, c_in, inner * c_in), (t.n_out * inner * c_out, c_out, inner * c_out))
        emit_dft(node, ctx, x, y, lines, t)

    def flops(self, node: Node) -> int:
        axis, t = _plan(node)
        x = node.inputs[0]
        return flops(t, x.size // (x.shape[axis] * x.shape[-1]))
