"""Convolution geometry shared by Conv and ConvTranspose: output extents and begin pads from the attributes
(auto_pad, pads, strides, dilations, output_padding, output_shape), and the 3-D form the f32-conv kernels
take (1-D and 2-D convolutions get leading extents of 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..cexpr import is_variable
from ..errors import UnsupportedError
from ..ir import Node
from ._spatial import spatial_ints

KERNEL_DIMS = 3
CONV_ATTRS = {"auto_pad": "NOTSET", "dilations": None, "group": 1, "kernel_shape": None, "pads": None, "strides": None}


@dataclass
class ConvGeometry:
    """A forward convolution's axes: input index = output index * stride + tap * dilation - pad."""
    inp: list[int]
    out: list[int]
    kernel: list[int]
    stride: list[int]
    dilation: list[int]
    pad: list[int]  # before each axis

    def fields(self) -> list[tuple[str, list[int]]]:
        """(member, values) of struct mlcc_f32_conv_geometry, padded to 3-D, in declaration order."""
        lead = KERNEL_DIMS - len(self.inp)

        def pad3(values: list[int], fill: int) -> list[int]:
            return [fill] * lead + list(values)

        return [("in", pad3(self.inp, 1)), ("out", pad3(self.out, 1)), ("kernel", pad3(self.kernel, 1)),
                ("stride", pad3(self.stride, 1)), ("dilation", pad3(self.dilation, 1)), ("pad", pad3(self.pad, 0))]

    @property
    def taps(self) -> int:
        return int(np.prod(self.kernel))

    @property
    def in_size(self) -> int:
        return math.prod(self.inp)  # a run-time size (cexpr.Sym) where the spatial extent varies

    @property
    def out_size(self) -> int:
        return math.prod(self.out)

    @property
    def run_time(self) -> bool:
        """Some extent is known only at run time: the geometry struct is filled on each run."""
        return any(is_variable(d) for d in [*self.inp, *self.out])


def check_operands(node: Node, weight_channel_axis: int) -> tuple[int, list[int]]:
    """Validates X and W; returns the group count and the kernel extents."""
    x, w = node.inputs[0], node.inputs[1]
    # float16 is computed in float32 (passes/widen_float16)
    if any(v is not None and v.dtype not in (np.float32, np.float16) for v in node.inputs):
        raise UnsupportedError(f"{node.op_type} on {x.dtype.name} is not supported yet (float32 only)", node.where())
    spatial = len(x.shape) - 2
    if not 1 <= spatial <= KERNEL_DIMS or len(w.shape) != len(x.shape):
        raise UnsupportedError(f"{node.op_type} of {x.type_str()} with {w.type_str()} (1 to 3 spatial dims)", node.where())
    kernel = list(w.shape[2:])
    if node.attrs.get("kernel_shape") is not None and spatial_ints(node, "kernel_shape", spatial, 1) != kernel:
        raise UnsupportedError(f"kernel_shape {node.attrs['kernel_shape']} disagrees with W {w.type_str()}", node.where())
    groups = int(node.attrs["group"])
    in_channels = x.shape[1]
    # W is [M, C / group, ...] for Conv and [C, M / group, ...] for ConvTranspose
    w_channels = w.shape[1] * groups if weight_channel_axis == 1 else w.shape[0]
    if groups < 1 or in_channels % groups or in_channels != w_channels:
        raise UnsupportedError(f"{node.op_type}: X {x.type_str()}, W {w.type_str()} and group={groups} disagree", node.where())
    return groups, kernel


def _same_pads(total: int, mode: str) -> int:
    """The begin pad for SAME_UPPER (less before) or SAME_LOWER (more before)."""
    return total // 2 if mode == "SAME_UPPER" else total - total // 2


def conv_geometry(node: Node) -> ConvGeometry:
    groups, kernel = check_operands(node, 1)
    x, w = node.inputs[0], node.inputs[1]
    if w.shape[0] % groups:
        raise UnsupportedError(f"Conv: {w.shape[0]} output channels do not split into {groups} groups", node.where())
    inp, n = list(x.shape[2:]), len(kernel)
    stride, dilation = spatial_ints(node, "strides", n, 1), spatial_ints(node, "dilations", n, 1)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    mode = node.attrs["auto_pad"]
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        out = [-(-i // s) for i, s in zip(inp, stride)]
        totals = [max(0, (o - 1) * s + e - i) for o, s, e, i in zip(out, stride, span, inp)]
        begin = [_same_pads(t, mode) for t in totals]
    elif mode in ("NOTSET", "VALID"):
        pads = spatial_ints(node, "pads", 2 * n, 0) if mode == "NOTSET" else [0] * (2 * n)
        begin = pads[:n]
        out = [(i + b + e - s_) // s + 1 for i, b, e, s_, s in zip(inp, pads[:n], pads[n:], span, stride)]
    else:
        raise UnsupportedError(f"auto_pad={mode!r}", node.where())
    if any(o < 1 for o in out) or min(stride) < 1 or min(dilation) < 1 or min(begin) < 0:
        raise UnsupportedError(f"Conv of {x.type_str()} with {w.type_str()} has no valid output", node.where())
    return ConvGeometry(inp, out, kernel, stride, dilation, begin)


def conv_transpose_geometry(node: Node) -> ConvGeometry:
    """The forward convolution a ConvTranspose is the adjoint of: its `inp` is the ConvTranspose's output.

    With output_shape or a SAME auto_pad the total padding is derived; as the spec says (and onnxruntime
    does), SAME_UPPER puts the smaller half first, NOTSET and SAME_LOWER the larger."""
    groups, kernel = check_operands(node, 0)
    x = node.inputs[0]
    src, n = list(x.shape[2:]), len(kernel)
    stride, dilation = spatial_ints(node, "strides", n, 1), spatial_ints(node, "dilations", n, 1)
    extra = spatial_ints(node, "output_padding", n, 0)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    full = [s * (i - 1) + a + e for s, i, a, e in zip(stride, src, extra, span)]  # the output with no padding
    mode = node.attrs["auto_pad"]
    shape = node.attrs.get("output_shape")
    if shape is not None and len(shape):
        target = [int(v) for v in list(shape)[-n:]]
    elif mode in ("SAME_UPPER", "SAME_LOWER"):
        target = [i * s for i, s in zip(src, stride)]
    else:
        target = None
    if target is not None:
        totals = [max(0, f - t) for f, t in zip(full, target)]
        begin = [t // 2 if mode == "SAME_UPPER" else t - t // 2 for t in totals]
        out = target
    elif mode in ("NOTSET", "VALID"):
        pads = spatial_ints(node, "pads", 2 * n, 0) if mode == "NOTSET" else [0] * (2 * n)
        begin = pads[:n]
        out = [f - b - e for f, b, e in zip(full, pads[:n], pads[n:])]
    else:
        raise UnsupportedError(f"auto_pad={mode!r}", node.where())
    if any(o < 1 for o in out) or min(stride) < 1 or min(dilation) < 1 or min(begin) < 0:
        raise UnsupportedError(f"ConvTranspose of {x.type_str()} has no valid output", node.where())
    # the adjoint forward convolution reads the ConvTranspose output (`out`) and produces its input (`src`)
    return ConvGeometry(out, src, kernel, stride, dilation, begin)
