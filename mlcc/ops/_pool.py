"""Window geometry shared by MaxPool and AveragePool, and their lowering onto the f32-pool kernels.

The kernels take up to three spatial dims (d, h, w); 1-D and 2-D pools pad the leading dims with extent 1.
Output extents and pads follow onnxruntime: SAME pads split the total as evenly as possible (the odd one
at the end for SAME_UPPER, at the start for SAME_LOWER); ceil_mode drops a last window that would start in
the end padding.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ShapeError, UnsupportedError
from ..ir import Node
from ._spatial import spatial_ints

KERNEL_DIMS = 3
POOL_ATTRS = {"kernel_shape": None, "strides": None, "pads": None, "auto_pad": "NOTSET", "ceil_mode": 0}


@dataclass
class PoolGeometry:
    planes: int  # batch * channels
    inp: list[int]
    out: list[int]
    kernel: list[int]
    stride: list[int]
    dilation: list[int]
    pad_begin: list[int]
    pad_end: list[int]

    @property
    def taps(self) -> int:
        return int(np.prod(self.kernel))

    def fields(self) -> list[tuple[str, list[int]]]:
        """(name, values) per member of mlcc_pool_geometry, in declaration order."""
        return [("in", self.inp), ("out", self.out), ("kernel", self.kernel), ("stride", self.stride),
                ("dilation", self.dilation), ("pad_begin", self.pad_begin), ("pad_end", self.pad_end)]


def geometry(node: Node) -> PoolGeometry:
    x = node.inputs[0]
    spatial = len(x.shape) - 2
    if not 1 <= spatial <= KERNEL_DIMS:
        raise UnsupportedError(f"{node.op_type} over {spatial} spatial dims (1 to {KERNEL_DIMS} supported)", node.where())
    if node.attrs.get("kernel_shape") is None:
        raise UnsupportedError("attribute 'kernel_shape' is required", node.where())
    kernel = spatial_ints(node, "kernel_shape", spatial, 1)
    stride = spatial_ints(node, "strides", spatial, 1)
    dilation = spatial_ints(node, "dilations", spatial, 1)
    if min(kernel + stride + dilation) < 1:
        raise UnsupportedError("kernel_shape, strides and dilations must be positive", node.where())
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise UnsupportedError(f"auto_pad={auto_pad!r}", node.where())
    pads = spatial_ints(node, "pads", 2 * spatial, 0) if auto_pad == "NOTSET" else [0] * (2 * spatial)
    if min(pads) < 0:
        raise UnsupportedError("negative pads are not supported", node.where())
    ceil_mode = bool(node.attrs.get("ceil_mode", 0))
    inp = list(x.shape[2:])
    out, pad_begin, pad_end = [], pads[:spatial], pads[spatial:]
    for i, (n, k, s, d) in enumerate(zip(inp, kernel, stride, dilation)):
        span = (k - 1) * d + 1
        if auto_pad.startswith("SAME"):
            out.append(-(-n // s))
            total = max(0, (out[i] - 1) * s + span - n)
            pad_begin[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pad_end[i] = total - pad_begin[i]
            continue
        room = n + pad_begin[i] + pad_end[i] - span
        if room < 0:
            raise ShapeError(f"the window ({span} wide) is larger than the padded input ({room + span}) along "
                             f"spatial dim {i}", node.where())
        out.append((-(-room // s) if ceil_mode else room // s) + 1)
        if ceil_mode and (out[i] - 1) * s >= n + pad_begin[i]:
            out[i] -= 1  # a window starting in the end padding is dropped (onnxruntime; the spec from opset 22)

    lead = KERNEL_DIMS - spatial

    def full(values: list[int], fill: int) -> list[int]:
        return [fill] * lead + [int(v) for v in values]

    return PoolGeometry(planes=int(x.shape[0] * x.shape[1]), inp=full(inp, 1), out=full(out, 1),
                        kernel=full(kernel, 1), stride=full(stride, 1), dilation=full(dilation, 1),
                        pad_begin=full(pad_begin, 0), pad_end=full(pad_end, 0))


def pool_types(node: Node) -> list[tuple[np.dtype, tuple[int, ...]]]:
    """Y's type, and the int64 Indices' when the node names one. Computed here rather than by onnx's
    shape inference, which before opset 22 keeps a ceil_mode window that starts in the end padding."""
    x = node.inputs[0]
    shape = (*x.shape[:2], *geometry(node).out[KERNEL_DIMS - (len(x.shape) - 2):])
    return [(x.dtype, shape), (np.dtype(np.int64), shape)][:len(node.outputs)]


def lower_pool(node: Node, ctx, kernel: str, count_include_pad: bool | None = None) -> None:
    x = node.inputs[0]
    if x.dtype != np.float32:
        raise UnsupportedError(f"{node.op_type} on {x.dtype.name} is not supported yet (float32 only)", node.where())
    g = geometry(node)
    ctx.use_kernels("f32-pool")
    ctx.emit("ops/pool.c.j2", kernel=kernel, planes=g.planes, fields=g.fields(), count_include_pad=count_include_pad,
             x=ctx.ptr(node.inputs[0]), y=ctx.ptr(node.outputs[0]))
