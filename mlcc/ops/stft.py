"""STFT: frames of frame_length samples every frame_step samples of each signal [batch, length, 1 or 2],
each multiplied by the window (when given) and transformed (see _fourier); onesided (the default) keeps
bins 0..L/2. Output [batch, frames, bins, 2]. frame_step and frame_length decide the output shape: they
must be known at build time (frame_length defaults to the window's length, else the signal's).
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import const_ints
from ._fourier import Lines, Transform, check_dtype, emit_dft, flops


def _plan(node: Node) -> tuple[int, int, Transform]:
    """(frame step, frame count, transform of one frame)."""
    x, window = node.inputs[0], node.input(2)
    if len(x.shape) != 3 or x.shape[-1] not in (1, 2):
        raise UnsupportedError(f"STFT of {x.type_str()}: the signal must be [batch, length, 1 or 2]", node.where())
    step = const_ints(node, 1, "frame_step")[0]
    given = const_ints(node, 3, "frame_length")
    length = given[0] if given else window.shape[0] if window is not None else x.shape[1]
    if window is not None and tuple(window.shape) != (length,):
        raise UnsupportedError(f"STFT window {window.type_str()} does not match frame_length {length}", node.where())
    if step < 1 or not 1 <= length <= x.shape[1]:
        raise UnsupportedError(f"STFT of {x.type_str()} with frame_step {step} and frame_length {length}", node.where())
    frames = 1 + (x.shape[1] - length) // step
    bins = length // 2 + 1 if node.attrs["onesided"] else length
    return step, frames, Transform(length, length, bins, False, x.shape[-1] == 2, True, False)


@register
class STFT(Op):
    op_type = "STFT"
    attrs = {"onesided": 1}

    def infer(self, node: Node):
        x = node.inputs[0]
        _, frames, t = _plan(node)
        return [(x.dtype, (x.shape[0], frames, t.n_out, 2))]

    def lower(self, node: Node, ctx) -> None:
        x, window, y = node.inputs[0], node.input(2), node.outputs[0]
        check_dtype(node, x)
        if window is not None and window.dtype != x.dtype:
            raise UnsupportedError(f"STFT window {window.type_str()} differs from the signal's type", node.where())
        step, frames, t = _plan(node)
        c = x.shape[-1]
        lines = Lines((x.shape[0], frames), (x.shape[1] * c, step * c, c), (frames * t.n_out * 2, t.n_out * 2, 2))
        emit_dft(node, ctx, x, y, lines, t, window)

    def flops(self, node: Node) -> int:
        _, frames, t = _plan(node)
        return flops(t, node.inputs[0].shape[0] * frames) + node.inputs[0].shape[0] * frames * t.length
