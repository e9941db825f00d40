"""Conv (1-D to 3-D, groups, strides, pads, auto_pad, dilations, optional bias) on f32-gemm.

Per image and group, output[Mg][P] = W_g[Mg][K] * columns[K][P] + bias with K = input channels per group
times taps and P output pixels. The columns are packed straight into the GEMM's B panels, a chunk of
pixels at a time so scratch stays bounded: by im2col, or for a 1x1 stride-1 unpadded kernel by packing
the input rows themselves. Depthwise convolutions (one input channel per group) use a direct kernel.
"""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._conv import CONV_ATTRS, conv_geometry
from ._gemm import Epilogue, chunk_columns, packed_size, tile_for


def _is_pointwise(geo) -> bool:
    return all(k == 1 for k in geo.kernel) and all(s == 1 for s in geo.stride) and not any(geo.pad) and geo.inp == geo.out


def _offset(*terms: tuple[str, int]) -> str | None:
    """A C expression summing index * stride over the terms whose stride is not 0 (None when all are)."""
    used = [f"({index}) * {stride}u" for index, stride in terms if stride]
    return " + ".join(used) or None


@register
class Conv(Op):
    op_type = "Conv"
    attrs = dict(CONV_ATTRS)

    def infer(self, node: Node):
        geo = conv_geometry(node)
        x, w = node.inputs[0], node.inputs[1]
        return [(x.dtype, (x.shape[0], w.shape[0], *geo.out))]

    def lower(self, node: Node, ctx, epilogue: Epilogue | None = None) -> None:
        """epilogue: an activation and residual fused into the kernels (residual rows are output channels,
        columns output pixels, residual_batch_stride elements per image)."""
        geo = conv_geometry(node)
        x, w, bias, y = node.inputs[0], node.inputs[1], node.input(2), node.outputs[0]
        images, channels = x.shape[0], x.shape[1]
        groups, out_channels = int(node.attrs["group"]), w.shape[0]
        group_in, group_out = channels // groups, out_channels // groups
        ctx.use_kernels("f32-conv")
        values = dict(fields=geo.fields(), x=ctx.ptr(x), w=ctx.ptr(w), y=ctx.ptr(y),
                      bias=ctx.ptr(bias) if bias is not None else "NULL", epilogue=None)
        if group_in == 1 and groups > 1:
            if epilogue is not None:
                values["epilogue"] = epilogue.fields(ctx, _offset(("n", epilogue.residual_batch_stride)))
            ctx.emit("ops/conv.c.j2", mode="depthwise", images=images, channels=channels, multiplier=group_out,
                     x_image=channels * geo.in_size, y_image=out_channels * geo.out_size, **values)
            return
        tile = tile_for(ctx.target)
        ctx.use_kernels("f32-gemm")
        k, pixels = group_in * geo.taps, geo.out_size
        nc = chunk_columns(k, pixels, tile.nr)
        if epilogue is not None:
            e = epilogue
            image, group_rows = (f"t / {groups}u", group_out * e.residual_rs) if groups > 1 else ("t", 0)
            values["epilogue"] = e.fields(ctx, _offset((image, e.residual_batch_stride), ("group", group_rows),
                                                       ("p0", e.residual_cs)))
        ctx.emit("ops/conv.c.j2", mode="pointwise" if _is_pointwise(geo) else "im2col",
                 config=tile.config, nr=tile.nr, planes=images * groups, groups=groups,
                 group_in=group_in, m=group_out, k=k, pixels=pixels, nc=nc,
                 x_plane=group_in * geo.in_size, y_plane=group_out * pixels, w_group=group_out * k,
                 group_bias="NULL" if bias is None else f"{values['bias']} + group * {group_out}u",
                 scratch=ctx.scratch(4 * packed_size(k, nc, tile.nr), "columns"), **values)

    def flops(self, node: Node) -> int:
        geo = conv_geometry(node)
        x, w = node.inputs[0], node.inputs[1]
        macs = x.shape[0] * w.shape[0] * geo.out_size * w.shape[1] * geo.taps
        return 2 * macs
