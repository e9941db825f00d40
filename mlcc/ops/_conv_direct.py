"""Direct convolution of channels-last activations with few input channels (a network's stem: an image's 1
to 4 channels) or in groups (ShuffleNet's grouped 1x1), on f32-conv's mlcc_f32_conv_direct_nhwc__<isa>.
There im2col copies runs of a channel or three per tap and hands f32-gemm a k of a few dozen, and a group's
GEMM a few dozen columns; the direct kernel reads each tap in place for a block of output pixels, the
output channels in the vector lanes."""

from __future__ import annotations

import dataclasses

from ._gemm import packed_constant, packed_size

ALGORITHM = "direct"  # the Conv attr a tuning file's choice sets (passes/choose_winograd)
MAX_CHANNELS = 4  # input channels up to which the direct kernel beats im2col + f32-gemm (one group)
MAX_VECTORS = 4  # vectors of output channels per panel the kernel blocks (mlcc_f32_conv_direct_nhwc__<isa>)


def applies(target, groups: int, group_in: int, group_out: int, taps: int) -> bool:
    """Not depthwise (f32-dwconv's). Groups up to the target's direct_conv_max_group_k channels x taps; one
    group of at most MAX_CHANNELS channels up to its direct_conv_max_k (a 7x7 stem's k of 147 is long enough
    for f32-gemm's tiles)."""
    if groups == 1:
        return group_in <= MAX_CHANNELS and (target.direct_conv_max_k is None
                                             or group_in * taps <= target.direct_conv_max_k)
    return (group_in > 1 or group_out > 1) and group_in * taps <= target.direct_conv_max_group_k


def lanes(target) -> int:
    """Floats per vector (1 without SIMD)."""
    return max(1, target.vector_bytes // 4)


MIN_BLOCK_PIXELS = 3  # pixels a panel's register block keeps at least (the kernel's BLOCK_PIXELS)


def max_panel_vectors(target) -> int:
    """The widest panel whose block of accumulators still spans MIN_BLOCK_PIXELS pixels, with its row of
    weights and a broadcast beside them in the register file (the kernel's BLOCK_PIXELS): 4 vectors with 32
    registers, 3 with AVX2's 16, where a 4-vector panel ran 2 pixels a block. AMD Zen 4, AVX2, ShuffleNet's
    28-channel groups (28x28 shuffled, 56x56 from 6 channels), two 2-vector panels of 6-pixel blocks against
    one 4-vector panel: 0.89-0.95x the time. Without SIMD (the __reference form) MAX_VECTORS."""
    nv = MAX_VECTORS
    while lanes(target) > 1 and nv > 1 and (target.vector_registers - nv - 2) // nv < MIN_BLOCK_PIXELS:
        nv -= 1
    return nv


def panel_width(target, out_channels: int) -> int:
    """Output channels per panel: whole vectors, at most max_panel_vectors, the panels as even as they come
    (96 channels on AVX-512: two panels of 3 vectors, not 4 + 2; 28 on AVX2: two of 2, not one of 4)."""
    width = lanes(target)
    vectors = -(-out_channels // width)
    panels = -(-vectors // max_panel_vectors(target))
    return -(-vectors // panels) * width


def lower(node, ctx, b, values: dict) -> None:
    """Render ops/conv_nhwc.c.j2's direct mode. b: the weights as [groups][k][group_out], k ordered
    (kd, kh, kw, c); values: the channels-last lowering's (geometry: its ConvGeometry, x, y, bias, fields,
    images, groups, group_in, group_out, pixels, y_pitch, epilogue fields, x_channels: a table's C name or
    "NULL", ...)."""
    groups, k, group_out = b.shape
    geo = values.pop("geometry")
    if all(n == 1 for n in geo.kernel + geo.stride) and not any(geo.pad) and geo.inp == geo.out:
        # 1x1 stride 1: the pixels in memory order are one row, cut into whole blocks (7x7 would run singly)
        values["fields"] = dataclasses.replace(geo, inp=[geo.out_size], out=[geo.out_size], kernel=[1], stride=[1],
                                               dilation=[1], pad=[0]).fields()
    nr = panel_width(ctx.target, group_out)
    vectors = nr // lanes(ctx.target)
    w = ctx.constant(packed_constant(node.inputs[1], b, nr, "direct_packed"))
    # the entry point for this panel width: the model links none of the others
    ctx.emit("ops/conv_nhwc.c.j2", mode="direct", w=w, nr=nr, parallel=ctx.parallel(),
             kernel=ctx.kernel(f"mlcc_f32_conv_direct_nhwc_{vectors}v" + ("" if values["x_channels"] == "NULL" else "_permuted")),
             w_group=packed_size(k, group_out, nr),
             y_image_pitch=values["pixels"] * values["y_pitch"], **{key: v for key, v in values.items() if key != "w"})

