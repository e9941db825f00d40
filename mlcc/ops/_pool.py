"""Window geometry shared by MaxPool and AveragePool, and their lowering onto the f32-pool kernels.

The kernels take up to three spatial dims (d, h, w); 1-D and 2-D pools pad the leading dims with extent 1.
Output extents come from shape inference (it knows ceil_mode and every opset's rounding rule); pads come
from `pads` or, for auto_pad, from the SAME rule onnxruntime applies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node

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


def _ints(node: Node, name: str, count: int, default: int) -> list[int]:
    value = node.attrs.get(name)
    if value is None or len(value) == 0:
        return [default] * count
    if len(value) != count:
        raise UnsupportedError(f"{name} has {len(value)} entries for {count} spatial dims", node.where())
    return [int(v) for v in value]


def geometry(node: Node) -> PoolGeometry:
    x, y = node.inputs[0], node.outputs[0]
    if x.dtype != np.float32:
        raise UnsupportedError(f"{node.op_type} on {x.dtype.name} is not supported yet (float32 only)", node.where())
    spatial = len(x.shape) - 2
    if not 1 <= spatial <= KERNEL_DIMS:
        raise UnsupportedError(f"{node.op_type} over {spatial} spatial dims (1 to {KERNEL_DIMS} supported)", node.where())
    if node.attrs.get("kernel_shape") is None:
        raise UnsupportedError("attribute 'kernel_shape' is required", node.where())
    kernel = _ints(node, "kernel_shape", spatial, 1)
    stride = _ints(node, "strides", spatial, 1)
    dilation = _ints(node, "dilations", spatial, 1)
    if min(kernel + stride + dilation) < 1:
        raise UnsupportedError("kernel_shape, strides and dilations must be positive", node.where())
    inp, out = list(x.shape[2:]), list(y.shape[2:])
    auto_pad = node.attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pad_begin, pad_end = [], []
        for n, o, k, s, d in zip(inp, out, kernel, stride, dilation):
            total = max(0, (o - 1) * s + (k - 1) * d + 1 - n)
            small = total // 2
            pad_begin.append(small if auto_pad == "SAME_UPPER" else total - small)
            pad_end.append(total - pad_begin[-1])
    elif auto_pad in ("NOTSET", "VALID"):
        pads = _ints(node, "pads", 2 * spatial, 0) if auto_pad == "NOTSET" else [0] * (2 * spatial)
        pad_begin, pad_end = pads[:spatial], pads[spatial:]
        if min(pads) < 0:
            raise UnsupportedError("negative pads are not supported", node.where())
    else:
        raise UnsupportedError(f"auto_pad={auto_pad!r}", node.where())

    lead = KERNEL_DIMS - spatial

    def full(values: list[int], fill: int) -> list[int]:
        return [fill] * lead + [int(v) for v in values]

    return PoolGeometry(planes=int(x.shape[0] * x.shape[1]), inp=full(inp, 1), out=full(out, 1),
                        kernel=full(kernel, 1), stride=full(stride, 1), dilation=full(dilation, 1),
                        pad_begin=full(pad_begin, 0), pad_end=full(pad_end, 0))


def lower_pool(node: Node, ctx, kernel: str, count_include_pad: bool | None = None) -> None:
    g = geometry(node)
    ctx.use_kernels("f32-pool")
    ctx.emit("ops/pool.c.j2", kernel=kernel, planes=g.planes, fields=g.fields(), count_include_pad=count_include_pad,
             x=ctx.ptr(node.inputs[0]), y=ctx.ptr(node.outputs[0]))
