"""ConvTranspose (1-D to 3-D, groups, strides, pads, dilations, output_padding, output_shape, auto_pad,
optional bias) as the adjoint of a convolution, on f32-gemm and f32-conv.

Per image and group, columns[Mg * taps][P] = W_g^T * X_g[Cg][P] over the P input pixels, then col2im adds
every column into the output, which starts as the bias. A constant W is transposed at build time so the
GEMM reads it row by row. Input pixels go a chunk at a time so scratch stays bounded.
"""

from __future__ import annotations

import numpy as np

from ..cexpr import bound
from ..ir import Node, Value
from . import Op, register
from ._conv import CONV_ATTRS, conv_transpose_geometry
from ._fold import MakeConstant, float_const, scaled_bias
from ._gemm import chunk_columns, packed_size, scratch_budget, use_tile


@register
class ConvTranspose(Op):
    op_type = "ConvTranspose"
    variable_extents = True  # run-time spatial sizes: the adjoint geometry filled on each run, chunks for the bound
    vector_families = ("f32-gemm",)
    attrs = {**CONV_ATTRS, "output_padding": None, "output_shape": None}

    def fold_scale_shift(self, node: Node, scale, shift, constant: MakeConstant) -> bool:
        """The weight is [C, M / group, k...]: output channel g * M/group + j is w[group g's rows, j]."""
        w, bias = node.inputs[1], node.input(2)
        groups = int(node.attrs.get("group", 1))
        if not float_const(w) or (bias is not None and not float_const(bias)) or w.shape[1] * groups != scale.size:
            return False
        grouped = w.data.astype(np.float64).reshape(groups, w.shape[0] // groups, w.shape[1], -1)
        data = (grouped * scale.reshape(groups, 1, w.shape[1], 1)).reshape(w.shape)
        node.inputs = [node.inputs[0], constant(f"{w.name}_folded", data.astype(w.dtype)),
                       scaled_bias(node, scale, shift, constant)]
        return True

    def infer(self, node: Node):
        geo = conv_transpose_geometry(node)
        x, w = node.inputs[0], node.inputs[1]
        return [(x.dtype, (x.shape[0], w.shape[1] * int(node.attrs["group"]), *geo.inp))]

    def lower(self, node: Node, ctx) -> None:
        geo = conv_transpose_geometry(node)
        x, w, bias, y = node.inputs[0], node.inputs[1], node.input(2), node.outputs[0]
        images, channels = x.shape[0], x.shape[1]
        groups, group_out = int(node.attrs["group"]), w.shape[1]
        group_in, rows = channels // groups, group_out * geo.taps
        pixels = geo.out_size  # input pixels of the ConvTranspose: outputs of the adjoint convolution
        if w.is_const:  # [C, Mg * taps] per group -> [G][Mg * taps][Cg]
            data = np.ascontiguousarray(w.data.reshape(groups, group_in, rows).transpose(0, 2, 1), dtype=np.float32)
            a, a_rs, a_cs = ctx.constant(Value(f"{w.name}_transposed", np.dtype(np.float32), data.shape, data)), group_in, 1
        else:
            a, a_rs, a_cs = ctx.ptr(w), 1, rows
        tile = use_tile(ctx)
        ctx.use_kernels("f32-conv")
        nc = chunk_columns(group_in, bound(pixels), tile.nr, extra_rows=rows, budget=scratch_budget(ctx.target))
        ctx.emit("ops/conv_transpose.c.j2", fields=geo.fields(), run_time=geo.run_time, config=tile.config, nr=tile.nr,
                 x=ctx.ptr(x), a=a, a_rs=a_rs, a_cs=a_cs, y=ctx.ptr(y),
                 bias=ctx.ptr(bias) if bias is not None else None,
                 out_planes=images * groups * group_out, out_channels=groups * group_out, out_size=geo.in_size,
                 planes=images * groups, groups=groups, group_in=group_in, group_out=group_out, rows=rows,
                 pixels=pixels, nc=nc, x_plane=group_in * pixels, y_plane=group_out * geo.in_size,
                 w_group=rows * group_in,
                 packed=ctx.scratch(4 * packed_size(group_in, nc, tile.nr), "packed_x"),
                 columns=ctx.scratch(4 * rows * nc, "columns"))

    def flops(self, node: Node) -> int:
        geo = conv_transpose_geometry(node)
        x, w = node.inputs[0], node.inputs[1]
        return 2 * x.shape[0] * x.shape[1] * geo.out_size * w.shape[1] * geo.taps
