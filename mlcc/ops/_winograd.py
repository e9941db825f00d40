"""Winograd F(4x4, 3x3) for channels-last 3x3 and 5x5 convolutions (runtime_c/kernels/f32-winograd).

Each 4x4 block of output pixels comes from 36 transformed points of the 6x6 input patch around it: per
point, one f32-gemm product of tiles x input channels by the weights transformed at build time (U = G g G^T,
packed as B), then the output transform adds the bias and applies the fused epilogue. 36 multiply-adds per
tile and channel pair instead of direct convolution's 144; relative error about 1e-6 of the output's scale.

A 5x5 kernel, zero-padded to 6x6, is four 3x3 pieces: at stride 1 the pieces 3 taps apart, each reading the
image shifted by its offset; at stride 2 the taps of each parity of row and column, each convolving at
stride 1 the image's pixels of that parity (its phase, copied out first). The four pieces' inputs are
transformed side by side as four times the channels, so one product per point sums them: 144 multiply-adds
per tile and channel pair instead of 400 (AlexNet's conv2, ZFNet's conv2, GoogLeNet's 5x5 branches).
"""

from __future__ import annotations

import numpy as np

from ..cexpr import bound, offset
from ._conv import ConvGeometry
from ._gemm import SCRATCH_BUDGET, packed_constant, packed_size, use_tile

ALGORITHM = "winograd_f4x3"  # the Conv attr passes/choose_winograd sets
POINTS = 36
OUTPUT_SIDE = 4

# G for the points 0, 1, -1, 2, -2 and infinity (the input and output matrices are the kernel's)
_G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
               [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])

# Below this many channels the transforms cost more than the multiply-adds they save.
MIN_CHANNELS = 8


def min_tiles(target, transformed_bytes: int | None = None) -> int:
    """Tiles an image needs for Winograd to win. With few tiles its products are bound by reading the
    transformed weights (four times direct convolution's), which costs more the faster the target computes:
    16 tiles (14x14 outputs) on 64-byte vectors, 8 on 32-byte, 4 (7x7) on 16-byte and narrower. Thread CPU
    medians, 7x7x512 -> 512: AVX-512 direct 2.7 ms vs Winograd 4.4 ms; wasm32 direct 10.5-14.2 ms vs
    Winograd 4.7-9.6 ms; resnet50 on AVX-512 78 ms from 16 tiles vs 81 ms from 8. Transformed weights
    (`transformed_bytes`) that fit the core's L2 are read from it, not from memory: then 4 tiles are enough
    on every target (ResNet-8's 8x8x64 -> 64, 4 tiles, 590 KB: Winograd 0.022 ms vs im2col 0.045 on AVX2
    and 0.021 vs 0.043 on AVX-512, per-step medians; `mlcc tune` chose the same)."""
    if transformed_bytes is not None and transformed_bytes <= target.l2_bytes:
        return 4
    return max(4, 16 * target.vector_bytes // 64)


def tiles(geo: ConvGeometry) -> int:
    return -(-geo.out[0] // OUTPUT_SIDE) * -(-geo.out[1] // OUTPUT_SIDE)


PIECE_STEP = 3  # taps between a 5x5 kernel's 3x3 pieces at stride 1


def applies(target, geo: ConvGeometry, groups: int, group_in: int, group_out: int) -> bool:
    """Whether a channels-last convolution runs as Winograd F(4x4, 3x3) on this target: 2-D, 3x3 at stride
    1 or 5x5 at stride 1 or 2 (a 3x3 at stride 2 would take as many multiply-adds in phases as direct),
    dilation 1, enough channels in each group, enough tiles, a data cache (a microcontroller
    keeps the smaller arena of direct convolution), and a memory policy that lets workspaces grow
    (targets.optimized_for); where the weights keep the model's size, the transformed weights (4 or 5.76
    times the kernel's) are prepared at load time in the arena (prepared_at_load). Groups run one after another, each its own narrower
    products, so a grouped convolution needs min_tiles per group (AlexNet's conv4 and conv5, 13x13 outputs
    in 16 tiles, 2 groups; medians of 8-20 runs: AVX-512 direct 1.48 and 0.99 ms vs Winograd 1.79 and
    1.22 ms; wasm32 direct 10.9 and 7.5 ms vs Winograd 4.1 and 2.8 ms)."""
    return (target.l1d_bytes > 0 and fits(geo)
            and min(group_in, group_out) >= MIN_CHANNELS
            and tiles(geo) >= groups * min_tiles(target, transformed_bytes(geo, groups, group_in, group_out))
            and target.memory_policy == "speed")


def transformed_bytes(geo: ConvGeometry, groups: int, group_in: int, group_out: int) -> int:
    """Bytes of the transformed weights: POINTS per 3x3 piece of each channel pair."""
    return 4 * POINTS * pieces(geo) * groups * group_in * group_out


def fits(geo: ConvGeometry) -> bool:
    """Whether the transforms compute this convolution at all (what `applies` asks before it weighs speed):
    2-D, 3x3 at stride 1 or 5x5 at stride 1 or 2, dilation 1."""
    stride_ok = list(geo.stride) == [1, 1] or (list(geo.kernel) == [5, 5] and list(geo.stride) == [2, 2])
    return (len(geo.kernel) == 2 and list(geo.kernel) in ([3, 3], [5, 5]) and stride_ok
            and list(geo.dilation) == [1, 1])


def prepared_at_load(target) -> bool:
    """Whether the transformed weights are computed at load time into the arena's prepared region
    (mlcc_f32_winograd_transform_weights, once per arena) from the model's own weights in the blob: under
    weights_policy "model" (wasm32's default), where the blob keeps the model's size and the arena may grow."""
    return target.weights_policy == "model"


def pieces(geo: ConvGeometry) -> int:
    """The 3x3 pieces of the kernel: 1, or 4 for a 5x5 one (f32-winograd's `piece` argument numbers them)."""
    return 1 if list(geo.kernel) == [3, 3] else 4


def transformed_weights(w: np.ndarray, groups: int = 1, stride: int = 1) -> np.ndarray:
    """W [groups * out, in, 3, 3] -> U [groups, 36, in, out]: G g G^T per channel pair, point-major (point =
    6 * row + col). A 5x5 W: its four 3x3 pieces (f32-winograd's order: row-major) side by side, U [groups,
    36, 4 * in, out]; at stride 2 the pieces are the taps of each parity (phase p: rows p / 2, columns p % 2)."""
    if w.shape[2:] == (5, 5):
        padded = np.zeros((*w.shape[:2], 6, 6), dtype=np.float64)
        padded[:, :, :5, :5] = w
        if stride == 2:
            parts = [padded[:, :, r::2, c::2] for r in (0, 1) for c in (0, 1)]
        else:
            parts = [padded[:, :, r:r + 3, c:c + 3] for r in (0, PIECE_STEP) for c in (0, PIECE_STEP)]
        return np.concatenate([transformed_weights(part, groups) for part in parts], axis=2)
    u = np.einsum("ij,oajk,lk->ilao", _G, w.astype(np.float64), _G)  # [6, 6, in, groups * out]
    u = u.reshape(POINTS, w.shape[1], groups, w.shape[0] // groups).transpose(2, 0, 1, 3)
    return np.ascontiguousarray(u, dtype=np.float32)


def point_stride(floats: int) -> int:
    """Floats from one point's matrix of v or m to the next: `floats` rounded up to whole 64-byte lines, and
    to an odd count of them. A transform writes (or reads) one tile's vectors at all 36 points before the next
    tile; strides of a multiple of 4 KB (16 tiles x 64 channels, 64 tiles x 16) put those 36 lines in one set
    of the L1 cache, so each line is evicted before its next vector arrives (AVX2's two 8-lane halves of 16
    channels); an odd count of lines spreads them over every set."""
    lines = -(-floats // 16)
    return 16 * (lines | 1)


def lower(node, ctx, geo: ConvGeometry, values: dict, groups: int, in_channels: int, out_channels: int) -> None:
    """Render ops/conv_winograd.c.j2. values: the channels-last lowering's (x, y, bias, fields, images,
    channels, y_pitch, epilogue: its fields advanced by image and group, ...); in_channels and out_channels:
    a group's."""
    w = node.inputs[1]
    ctx.use_kernels("f32-winograd")
    tile = use_tile(ctx, out_channels)
    stride = geo.stride[0]
    u_value = packed_constant(w, transformed_weights(w.data, groups, stride), tile.nr,
                              "winograd" if stride == 1 else "winograd_phases")
    if prepared_at_load(ctx.target) and w.dtype == np.float32:
        u = ctx.prepared(u_value, "ops/winograd_weights.c.j2", {"w": w}, groups=groups,
                         out_channels=out_channels, in_channels=w.shape[1], kernel=geo.kernel[0], stride=stride,
                         nr=tile.nr)
    else:
        u = ctx.constant(u_value)
    count_pieces = pieces(geo)
    depth = count_pieces * in_channels  # the products' k: every piece's input channels
    u_point = packed_size(depth, out_channels, tile.nr)
    count = tiles(geo)
    # Tiles per chunk: the transformed weights are read once per chunk, so a chunk may take up to half
    # their size in scratch; a multiple of the GEMM tile's rows.
    budget = max(SCRATCH_BUDGET, 4 * POINTS * depth * out_channels // 2)
    per_tile = 4 * POINTS * (depth + out_channels)
    chunk = min(bound(count), max(tile.mr, budget // per_tile // tile.mr * tile.mr))  # for the largest image
    v_point, m_point = point_stride(chunk * depth), point_stride(chunk * out_channels)
    pixels = geo.out_size
    phases = None
    if stride == 2:  # each phase a 3x3 stride-1 unpadded convolution of out + 2 pixels a side
        side = [extent + 2 for extent in geo.out]
        phase_geo = ConvGeometry(inp=side, out=list(geo.out), kernel=[3, 3], stride=[1, 1], dilation=[1, 1],
                                 pad=[0, 0])
        floats = side[0] * side[1] * in_channels
        images = ctx.scratch(4 * count_pieces * bound(floats), "winograd_phases")
        phases = dict(fields=phase_geo.fields(), image=offset(images, ("phase", floats)))
    ctx.emit("ops/conv_winograd.c.j2", config=tile.config, parallel=ctx.parallel(),
             input_kernel=ctx.kernel("mlcc_f32_winograd_input"),
             output_kernel=ctx.kernel("mlcc_f32_winograd_output"), tiles=count, chunk=chunk, groups=groups,
             in_channels=in_channels, out_channels=out_channels, k=depth, pieces=count_pieces, phases=phases,
             u=u, u_point=u_point, u_group=POINTS * u_point,
             v=ctx.scratch(4 * POINTS * v_point, "winograd_inputs"), v_point=v_point,
             m=ctx.scratch(4 * POINTS * m_point, "winograd_products"), m_point=m_point,
             y_image=pixels * values["y_pitch"], **{key: values[key] for key in ("fields", "x", "y", "bias", "images", "n",
                                                                             "channels", "x_image", "y_pitch",
                                                                             "epilogue", "run_time")})
