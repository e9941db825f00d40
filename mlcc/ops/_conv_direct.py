"""Direct convolution of channels-last activations with few input channels (a network's stem: an image's 1
to 4 channels), on f32-conv's mlcc_f32_conv_direct_nhwc__simd. There im2col copies runs of a channel or
three per tap and hands f32-gemm a k of a few dozen; the direct kernel reads each tap in place for a block
of output pixels, the output channels in the vector lanes."""

from __future__ import annotations

from ._gemm import packed_constant

MAX_CHANNELS = 4  # input channels per group up to which the direct kernel beats im2col + f32-gemm
MAX_VECTORS = 4  # vectors of output channels per panel the kernel blocks (mlcc_f32_conv_direct_nhwc__simd)


def applies(groups: int, group_in: int) -> bool:
    return groups == 1 and group_in <= MAX_CHANNELS


def panel_width(target, out_channels: int) -> int:
    """Output channels per panel: whole vectors, at most MAX_VECTORS, the panels as even as they come
    (96 channels on AVX-512: two panels of 3 vectors, not 4 + 2)."""
    lanes = max(1, target.vector_bytes // 4)
    vectors = -(-out_channels // lanes)
    panels = -(-vectors // MAX_VECTORS)
    return -(-vectors // panels) * lanes


def lower(node, ctx, b, values: dict, out_channels: int) -> None:
    """Render ops/conv_nhwc.c.j2's direct mode. b: the weights as [k][out_channels], k ordered (kd, kh, kw, c);
    values: the channels-last lowering's (x, y, bias, fields, images, y_pitch, epilogue fields, ...)."""
    nr = panel_width(ctx.target, out_channels)
    w = ctx.constant(packed_constant(node.inputs[1], b, nr, "direct_packed"))
    ctx.emit("ops/conv_nhwc.c.j2", mode="direct", w=w, nr=nr, out_channels=out_channels,
             y_image_pitch=values["pixels"] * values["y_pitch"], **{k: v for k, v in values.items() if k != "w"})
