"""QuantizedConv (internal, domain "mlcc"): a 1-D or 2-D convolution of 8-bit activations by int8 weights,
requantized; made by passes/lower_quantized_islands (see quantized_mat_mul for the operands).

NCHW: through runtime_c/kernels/qs8-gemm (patches of _qs8.conv_rows output pixels at a time in scratch, then the
GEMM). Channels-last (attr layout "NHWC", set by passes/choose_layout on targets where it pays: _qs8.
runs_channels_last): a depthwise one through qs8-dwconv (channels as the vector lanes, weights re-laid taps x
channels at build time), the others through qs8-packed (weights packed in 16-column panels at build time; a
1x1 reads its input in place, a KxK hands the GEMM each pixel's taps as pointers into the input where the
target has an indirect form: a pointer per tap where channels are a multiple of 4, per kernel row where they are
not (an image's 1 or 3 channels); else gathers them as runs of channels).

Attributes: the geometry (kernel, stride, dilation, pad_begin: 2 ints each, group), x_zero (the padding's
value), a_flip, y_zero, y_min, y_max; layout.
"""

from __future__ import annotations

import numpy as np

from .. import kernels
from ..ir import Node, Value
from . import Op, register
from ._layout import NHWC, is_channels_last
from ._qs8 import (
    CONV_ROWS,
    FAMILY,
    byte_pointer,
    conv_rows,
    gemm_for,
    nchw_gemm_for,
    packed_layout,
    packed_panels,
    patch_bytes,
    runs_channels_last,
)
from .quantized_mat_mul import DOMAIN, emit_requant


@register
class QuantizedConv(Op):
    op_type = "QuantizedConv"
    vector_families = ("qs8-gemm", "qs8-packed", "qs8-dwconv")
    domain = DOMAIN
    channels_last_seed = True

    # --- channels-last (passes/choose_layout) ----------------------------------------------------
    def activation_inputs(self, node: Node) -> list[int]:
        return [0]

    def runs_channels_last(self, node: Node) -> bool:
        """2-D, and one group, depthwise, or grouped 1x1 in place (one GEMM per group on the pixels where they
        are, as ShuffleNet's); another grouped one stays channel-major."""
        x, w = node.inputs[0], node.inputs[1]
        group = int(node.attrs["group"])
        return len(x.shape) == 4 and not x.is_const and (group == 1 or group == x.shape[1] == w.shape[0]
                                                         or _in_place_1x1(node))

    def runs_channels_last_on(self, node: Node, target) -> bool:
        return runs_channels_last(target)

    def to_channels_last(self, node: Node) -> None:
        node.attrs["layout"] = NHWC

    def lower(self, node: Node, ctx) -> None:
        if is_channels_last(node):
            self._lower_channels_last(node, ctx)
            return
        x, w = node.inputs[0], node.inputs[1]
        y = node.outputs[0]
        a = node.attrs
        (in_h, in_w), (out_h, out_w) = _spatial(x.shape), _spatial(y.shape)
        pixels = out_h * out_w
        channel_major = nchw_gemm_for(ctx.target)
        ctx.use_kernels(FAMILY)
        if int(a["group"]) == x.shape[1] == w.shape[0]:  # depthwise
            rows, patches, driver, gemm = 0, None, "mlcc_qs8_dwconv_nchw", None
        elif channel_major:  # patches as k rows of `rows` pixels (none for an in-place 1x1)
            rows = CONV_ROWS
            k = x.shape[1] // int(a["group"]) * int(a["kernel"][0]) * int(a["kernel"][1])
            in_place = (list(a["kernel"]) == [1, 1] and list(a["stride"]) == [1, 1] and list(a["pad_begin"]) == [0, 0]
                        and (in_h, in_w) == (out_h, out_w))
            patches = "NULL" if in_place else ctx.scratch(rows * k, "patches", dtype="uint8")
            driver, gemm = "mlcc_qs8_conv_nchw_cm", channel_major
        else:
            rows = min(conv_rows(ctx.target), pixels)
            patches = ctx.scratch(rows * w.shape[1], "patches", dtype="uint8")
            driver, gemm = "mlcc_qs8_conv_nchw", gemm_for(ctx.target)
        for function in (driver, gemm):
            if function:
                ctx.uses_kernel(function)
        geometry = ", ".join(str(int(v)) for v in (
            x.shape[1], in_h, in_w, out_h, out_w, *a["kernel"], *a["stride"], *a["dilation"], *a["pad_begin"],
            a["group"], w.shape[0] // int(a["group"])))
        ctx.emit("ops/quantized_conv.c.j2", requant=emit_requant(ctx, node), gemm=gemm, driver=driver,
                 geometry=geometry, batch=x.shape[0], x=byte_pointer(ctx, x), x_size=x.size // x.shape[0],
                 y=byte_pointer(ctx, y, writes=True), y_size=y.size // y.shape[0], x_zero=int(a["x_zero"]) & 0xFF, a_flip=int(a["a_flip"]),
                 w=ctx.ptr(w), ldw=w.shape[1], rows=rows, patches=patches)

    def _lower_channels_last(self, node: Node, ctx) -> None:
        x, w, y = node.inputs[0], node.inputs[1], node.outputs[0]
        a = node.attrs
        (in_h, in_w, channels), (out_h, out_w, n) = x.shape[1:], y.shape[1:]
        kh, kw = (int(v) for v in a["kernel"])
        taps = kh * kw
        geometry = ", ".join(str(int(v)) for v in (
            channels, in_h, in_w, out_h, out_w, kh, kw, *a["stride"], *a["dilation"], *a["pad_begin"], a["group"],
            n // int(a["group"])))
        common = dict(requant=emit_requant(ctx, node), geometry=geometry, batch=x.shape[0], x=byte_pointer(ctx, x),
                      x_size=x.size // x.shape[0], y=byte_pointer(ctx, y, writes=True), y_size=y.size // y.shape[0],
                      x_zero=int(a["x_zero"]) & 0xFF, a_flip=int(a["a_flip"]))
        ctx.use_kernels(FAMILY)  # qs8-gemm.h: the requantization both channels-last families share
        groups = int(a["group"])
        if groups > 1 and not groups == channels == n:  # grouped 1x1: each group's GEMM on its pixels' channels
            self._lower_grouped(node, ctx, groups)
            return
        if groups > 1:  # depthwise: the weights as taps x channels, the vector of a channel block
            laid = np.ascontiguousarray(w.data[:, :taps].T)
            weights = ctx.constant(Value(f"{w.name}_taps", np.dtype(np.int8), laid.shape, laid))
            ctx.emit("ops/quantized_conv_nhwc.c.j2", kernel=ctx.kernel("mlcc_qs8_dwconv_nhwc"),
                     w=weights, patches=None, **common)
            return
        k = taps * channels
        taps_c = w.data[:, :k].reshape(n, channels, kh, kw).transpose(0, 2, 3, 1)  # (n, kh, kw, c)
        in_place = (taps == 1 and list(a["stride"]) == [1, 1] and list(a["pad_begin"]) == [0, 0]
                    and (in_h, in_w) == (out_h, out_w))
        row = -(-k // 4) * 4  # a patch row, zero-padded to whole quads (qs8-packed.h)
        block = min(out_h * out_w, max(8, patch_bytes(ctx.target) // row // 8 * 8))
        vector_igemm = kernels.kernel(ctx.target, "mlcc_qs8_packed_igemm").where == "isa"
        if not in_place and channels % 4 and int(a["dilation"][1]) == 1 and vector_igemm:
            self._lower_kernel_rows(node, ctx, taps_c, common, block * row)
            return
        run = -(-channels // 4) * 4  # the bytes the indirect GEMM reads per tap
        if (not in_place and 3 * (run - channels) <= channels
                and kernels.kernel(ctx.target, "mlcc_qs8_packed_igemm").where == "isa"):
            # no patches: each tap's pointer, and the GEMM reads the input where it is, `run` bytes a tap (a
            # 3-channel image's taps are 4 bytes, the fourth meeting a zero weight); the pointers keep to the
            # patches' budget at 8 bytes a tap (sized by the patch row, a 3-channel image's table was 42 KB)
            block = min(out_h * out_w, max(8, patch_bytes(ctx.target) // (taps * 8) // 8 * 8))
            padded = np.zeros((n, kh, kw, run), np.int8)
            padded[..., :channels] = taps_c
            packed = packed_panels(padded.reshape(n, taps * run), packed_layout(ctx.target, "mlcc_qs8_packed_igemm"))
            weights = ctx.constant(Value(f"{w.name}_packed", np.dtype(np.int8), packed.shape, packed))
            work = ctx.scratch(block * taps * 8 + 3 * run, "taps", dtype="uint64")
            ctx.emit("ops/quantized_conv_nhwc.c.j2", kernel=ctx.kernel("mlcc_qs8_conv_nhwc_indirect"),
                     gemm=ctx.kernel("mlcc_qs8_packed_igemm"), w=weights, patches=work, rows=block, **common)
            return
        packed = packed_panels(taps_c.reshape(n, k), packed_layout(ctx.target))
        weights = ctx.constant(Value(f"{w.name}_packed", np.dtype(np.int8), packed.shape, packed))
        # (16 bytes past the rows: a short kernel row is moved as 16 bytes, qs8-packed.h)
        patches = "NULL" if in_place else ctx.scratch(block * row + 16, "patches", dtype="uint8")
        ctx.emit("ops/quantized_conv_nhwc.c.j2", kernel=ctx.kernel("mlcc_qs8_conv_nhwc"), gemm=ctx.kernel("mlcc_qs8_packed_gemm"),
                 w=weights, patches=patches, rows=block, **common)

    def _lower_kernel_rows(self, node: Node, ctx, taps_c: np.ndarray, common: dict, budget: int) -> None:
        """Few channels (an image's 1 or 3): each kernel row's kw taps are one run of kw * channels bytes in the
        input, rounded up to 4, which the indirect GEMM reads through one pointer per kernel row (a 3x3 on RGB:
        3 pointers a pixel, not 9 of 4-byte taps; DS-CNN's 10x4 on one channel: 10 quads read in place instead
        of patches copied byte by byte). The work (pointers, and the runs of the border columns composed once per
        call for each input row) keeps to the patches' `budget`."""
        x, y, a = node.inputs[0], node.outputs[0], node.attrs
        (in_h, in_w, channels), (out_h, out_w, n) = x.shape[1:], y.shape[1:]
        kh, kw = taps_c.shape[1:3]
        run = -(-kw * channels // 4) * 4
        padded = np.zeros((n, kh, run), np.int8)
        padded[..., :kw * channels] = taps_c.reshape(n, kh, kw * channels)
        packed = packed_panels(padded.reshape(n, kh * run), packed_layout(ctx.target, "mlcc_qs8_packed_igemm"))
        weights = ctx.constant(Value(f"{node.inputs[1].name}_packed", np.dtype(np.int8), packed.shape, packed))
        # mlcc_qs8_conv_nhwc_rows_lo / _hi (qs8-packed.h): the output columns whose runs stay in the input's rows
        stride_w, pad_left = int(a["stride"][1]), int(a["pad_begin"][1])
        lo = min(-(-pad_left // stride_w), out_w)
        room = (in_w + pad_left) * channels
        hi = 0 if room < run else (room - run) // (stride_w * channels) + 1
        hi = max(lo, min(hi, out_w))
        runs = run * (1 + in_h * (lo + out_w - hi))
        block = min(out_h * out_w, max(8, (budget - runs) // (kh * 8) // 8 * 8))
        work = ctx.scratch(block * kh * 8 + runs, "rows", dtype="uint64")
        ctx.emit("ops/quantized_conv_nhwc.c.j2", kernel=ctx.kernel("mlcc_qs8_conv_nhwc_rows"),
                 gemm=ctx.kernel("mlcc_qs8_packed_igemm"), w=weights, patches=work, rows=block, **common)

    def _lower_grouped(self, node: Node, ctx, groups: int) -> None:
        x, w, y = node.inputs[0], node.inputs[1], node.outputs[0]
        a = node.attrs
        (height, width, channels), n = x.shape[1:], y.shape[-1]
        group_in, group_out = channels // groups, n // groups
        layout = packed_layout(ctx.target)
        panels = [packed_panels(w.data[g * group_out:(g + 1) * group_out, :group_in], layout) for g in range(groups)]
        packed = np.concatenate(panels)
        weights = ctx.constant(Value(f"{w.name}_packed", np.dtype(np.int8), packed.shape, packed))
        bias, multiplier, shift = (ctx.ptr(v) for v in node.inputs[2:5])
        ctx.emit("ops/quantized_conv_grouped_nhwc.c.j2", gemm=ctx.kernel("mlcc_qs8_packed_gemm"), batch=x.shape[0],
                 groups=groups, group_in=group_in, group_out=group_out, channels=channels, out_channels=n,
                 pixels=height * width, x=byte_pointer(ctx, x), y=byte_pointer(ctx, y, writes=True), w=weights, group_bytes=panels[0].size,
                 bias=bias, multiplier=multiplier, shift=shift, a_flip=int(a["a_flip"]), y_zero=int(a["y_zero"]),
                 y_min=int(a["y_min"]), y_max=int(a["y_max"]))

    def flops(self, node: Node) -> int:
        taps = int(node.attrs["kernel"][0]) * int(node.attrs["kernel"][1])
        if is_channels_last(node):
            return 2 * node.outputs[0].size * node.inputs[0].shape[-1] // int(node.attrs["group"]) * taps
        group_in = node.inputs[0].shape[1] // int(node.attrs["group"])
        return 2 * node.outputs[0].size * group_in * taps


def _in_place_1x1(node: Node) -> bool:
    """A 1x1 convolution with stride 1 and no padding (its output pixels are its input's)."""
    a = node.attrs
    return (list(a["kernel"]) == [1, 1] and list(a["stride"]) == [1, 1] and list(a["pad_begin"]) == [0, 0]
            and node.inputs[0].shape[2:] == node.outputs[0].shape[2:])


def _spatial(shape: tuple[int, ...]) -> tuple[int, int]:
    return (1, shape[2]) if len(shape) == 3 else (shape[2], shape[3])
