"""Conv (1-D to 3-D, groups, strides, pads, auto_pad, dilations, optional bias) on f32-gemm.

Per image and group, output[Mg][P] = W_g[Mg][K] * columns[K][P] + bias with K = input channels per group
times taps and P output pixels. The columns are packed straight into the GEMM's B panels, a chunk of
pixels at a time so scratch stays bounded: by im2col, or for a 1x1 stride-1 unpadded kernel by packing
the input rows themselves. Depthwise convolutions (one input channel per group) use a direct kernel.
"""

from __future__ import annotations

import numpy as np

from .. import cexpr, tuning
from ..ir import Node, Value
from . import ABSORB, FORWARD, Op, _conv_direct, _winograd, register
from ._conv import CONV_ATTRS, conv_geometry
from ._epilogue import node_epilogue
from ._fold import MakeConstant, float_const, scaled_bias
from ._gemm import Epilogue, chunk_columns, packed_constant, packed_size, scratch_budget, use_tile
from ._layout import (
    CHANNELS_FIRST_INPUT,
    NHWC,
    channels_first_view,
    float_activations,
    is_channels_last,
    reads_channels_first,
    to_channels_last,
)
from .concat import output_row_pitch

# input channels up to which `mlcc tune` also times the direct kernel of an ungrouped convolution
DIRECT_TUNING_CHANNELS = 4 * _conv_direct.MAX_CHANNELS


def _is_pointwise(geo) -> bool:
    return all(k == 1 for k in geo.kernel) and all(s == 1 for s in geo.stride) and not any(geo.pad) and geo.inp == geo.out


# Set by the channels-last im2col lowering when it copies each row tile's residual to scratch first.
STAGED_RESIDUAL = "staged_residual"
# Set by passes/fold_channel_permutations on a grouped channels-last convolution: input channel c is read at
# stored channel order[c] (a channel shuffle before it folded into its reads; the direct kernel's table).
INPUT_CHANNEL_ORDER = "input_channel_order"


def _stages_residual(node: Node, ctx, epilogue: Epilogue | None, groups: int, y_pitch: int) -> bool:
    """Where memory binds, a channels-last im2col convolution may write its output over its fused residual
    (ResNet's second convolution of a block: one activation less at the peak). The GEMM stores partial
    sums of a row tile before its last slice of k reads the residual there, so each tile's rows of the
    residual are copied to scratch first (a tile's worth: a few KiB). The planner decides whether the
    output does overwrite it (in_place_inputs); the copy is made either way."""
    y, out_channels = node.outputs[0], node.inputs[1].shape[0]
    residual = epilogue.residual if epilogue is not None else None
    return not (ctx.target.memory_policy != "size" or residual is None or residual is node.inputs[0] or groups != 1
                or residual.shape != y.shape or residual.dtype != y.dtype or y_pitch != out_channels
                or (epilogue.residual_rs, epilogue.residual_cs) != (out_channels, 1))


def _residual_stage(node: Node, ctx, epilogue: Epilogue, chunk: int) -> dict:
    node.attrs[STAGED_RESIDUAL] = True
    rows = ctx.scratch(4 * chunk * node.inputs[1].shape[0], "residual_rows")
    return dict(source=ctx.ptr(epilogue.residual), rows=rows)


def _channel_axis(node: Node) -> int:
    return len(node.inputs[0].shape) - 1 if is_channels_last(node) and not reads_channels_first(node) else 1


def _input_channels(node: Node) -> int:
    return node.inputs[0].shape[_channel_axis(node)]


def _keeps_groups(order: np.ndarray, group: int) -> bool:
    """Does the permutation keep every channel in its group of `group` consecutive channels?"""
    index = np.arange(len(order))
    return bool(np.all(np.asarray(order) // group == index // group))


def _offset(*terms: tuple[str | int, int]) -> str | None:
    """index * stride summed over the terms that are not 0, folded (mlcc/cexpr.py); None when all are."""
    return cexpr.offset(None, *terms)


@register
class Conv(Op):
    op_type = "Conv"
    variable_extents = True  # channels-last: spatial sizes in a geometry filled at run time (stride 1 keeps them affine)
    choices_for_bound = ("algorithm",)  # passes/choose_winograd, by tiles: decided at the maximum
    vector_families = ("f32-gemm", "f32-conv", "f32-dwconv", "f32-winograd")
    quantized_form = "conv"
    attrs = dict(CONV_ATTRS)
    epilogue_input = 3
    row_pitch_output = True
    channels_last_seed = True

    def activation_inputs(self, node: Node) -> list[int]:
        return [i for i in (0, 3) if node.input(i) is not None]  # x and the fused residual

    def runs_channels_last(self, node: Node) -> bool:
        """2-D float32 with constant weights and bias (packed channels-last at build time)."""
        x, w, bias, residual, y = node.inputs[0], node.inputs[1], node.input(2), node.input(3), node.outputs[0]
        return (float_activations(self, node) and len(x.shape) == 4 and w.is_const and (bias is None or bias.is_const)
                and (residual is None or residual.shape == y.shape) and not x.is_const)

    def to_channels_last(self, node: Node) -> None:
        node.attrs["layout"] = NHWC

    def winograd_extra_bytes(self, node: Node, target, measured: bool = False) -> int | None:
        w = node.inputs[1]
        if not is_channels_last(node) or not w.is_const or node.inputs[0].dtype != np.float32:
            return None
        geo = conv_geometry(channels_first_view(node))
        groups = int(node.attrs.get("group", 1))
        channels = _input_channels(node)
        if not (_winograd.fits(geo) if measured else
                _winograd.applies(target, geo, groups, channels // groups, w.shape[0] // groups)):
            return None
        # 36 transformed points per 3x3 piece of each channel pair, for its 9 or 25 taps
        transformed = _winograd.POINTS * _winograd.pieces(geo) * w.size // geo.taps
        return (transformed - w.size) * 4

    def algorithms(self, node: Node, target) -> tuple[str, ...]:
        """Channels-last float32 convolutions other than depthwise: GEMM on im2col columns (a 1x1 reads the
        activations in place), Winograd where its transforms fit the kernel, and direct where there are
        groups or few enough input channels (at most DIRECT_TUNING_CHANNELS) that it could win."""
        w = node.inputs[1]
        if not is_channels_last(node) or not w.is_const or node.inputs[0].dtype != np.float32:
            return ()
        geo = conv_geometry(channels_first_view(node))
        groups = int(node.attrs.get("group", 1))
        group_in, group_out = _input_channels(node) // groups, w.shape[0] // groups
        if groups > 1 and group_in == 1 and group_out == 1:
            return ()  # depthwise: f32-dwconv, no alternative
        if reads_channels_first(node):
            return (_conv_direct.ALGORITHM,)  # only the direct kernel reads channels-first
        found = [tuning.IM2COL]
        if _winograd.fits(geo):
            found.append(_winograd.ALGORITHM)
        if groups > 1 or group_in <= DIRECT_TUNING_CHANNELS:
            found.append(_conv_direct.ALGORITHM)
        return tuple(found)

    def fold_scale_shift(self, node: Node, scale, shift, constant: MakeConstant) -> bool:
        w, bias = node.inputs[1], node.input(2)
        if not float_const(w) or (bias is not None and not float_const(bias)) or w.shape[0] != scale.size:
            return False
        data = w.data.astype(np.float64) * scale.reshape(-1, *(1,) * (len(w.shape) - 1))
        node.inputs = [node.inputs[0], constant(f"{w.name}_folded", data.astype(w.dtype)),
                       scaled_bias(node, scale, shift, constant)]
        return True

    def reads_channels_first(self, node: Node, index: int, target) -> bool:
        """An ungrouped convolution of few input channels on the direct kernel (a stem reading the image)
        takes its input as the model has it, channels-first, at run-time-independent sizes: the kernel reads
        channel c through its table of offsets, at c * H * W, with a pixel stride of 1."""
        x, w = node.inputs[0], node.inputs[1]
        if (index != 0 or not is_channels_last(node) or reads_channels_first(node) or x.dtype != np.float32
                or not float_const(w) or int(node.attrs["group"]) != 1 or node.attrs.get(INPUT_CHANNEL_ORDER) is not None
                or not all(isinstance(d, (int, np.integer)) for d in x.shape) or x.size > np.iinfo(np.int32).max):
            return False  # the table's offsets are int32
        algorithm = node.attrs.get("algorithm")
        taps = int(np.prod(w.shape[2:]))
        # panels of fewer than the kernel's widest: SqueezeNet's 64-channel stem on AVX-512, one panel of 4
        # vectors, took 700 us reading the planes against 650 for the copy and its run (24 and 32 channels,
        # 2 vectors: 350 -> 235 us with AVX-512, 245 -> 210 and 320 -> 295 with AVX2)
        narrow = _conv_direct.panel_width(target, w.shape[0]) < _conv_direct.MAX_VECTORS * _conv_direct.lanes(target)
        return narrow and (algorithm == _conv_direct.ALGORITHM or (
            algorithm is None and _conv_direct.applies(target, 1, x.shape[-1], w.shape[0], taps)))

    def read_channels_first(self, node: Node, index: int) -> None:
        node.attrs[CHANNELS_FIRST_INPUT] = True

    def reads_permuted_channels(self, node: Node, index: int, order: np.ndarray, axis: int, target) -> str | None:
        """x's channels permuted: a depthwise convolution (one output per channel, no residual) forwards the
        permutation; others absorb it into their weights when it keeps every channel in its group, else
        through the direct kernel's table of channel offsets where that kernel runs (channels-last, grouped:
        a channel shuffle before a grouped convolution)."""
        x, w, bias = node.inputs[0], node.inputs[1], node.input(2)
        if (index != 0 or axis != _channel_axis(node) or not float_const(w) or x.dtype != np.float32
                or (bias is not None and not float_const(bias)) or node.attrs.get(INPUT_CHANNEL_ORDER) is not None):
            return None
        groups, channels, out_channels = int(node.attrs["group"]), x.shape[axis], w.shape[0]
        group_in, group_out = channels // groups, out_channels // groups
        if groups > 1 and group_in == 1 and group_out == 1:
            return FORWARD if node.input(self.epilogue_input) is None else None
        if _keeps_groups(order, group_in):
            return ABSORB
        taps = int(np.prod(w.shape[2:]))
        direct = node.attrs.get("algorithm") in (None, _conv_direct.ALGORITHM)
        if is_channels_last(node) and direct and _conv_direct.applies(target, groups, group_in, group_out, taps):
            return ABSORB
        return None

    def read_permuted_channels(self, node: Node, index: int, order: np.ndarray, axis: int, constant: MakeConstant) -> None:
        w, bias = node.inputs[1], node.input(2)
        groups, channels = int(node.attrs["group"]), node.inputs[0].shape[axis]
        group_in = channels // groups
        inverse = np.argsort(order)
        if group_in == 1 and w.shape[0] == groups:  # depthwise: stored channel s computes logical channel inverse[s]
            node.inputs[1] = constant(f"{w.name}_permuted", w.data[inverse])
            if bias is not None:
                node.inputs[2] = constant(f"{bias.name}_permuted", bias.data[inverse])
        elif _keeps_groups(order, group_in):  # each group's weights read its channels where they are stored
            local = inverse.reshape(groups, group_in) % group_in
            grouped = w.data.reshape(groups, w.shape[0] // groups, group_in, *w.shape[2:])
            permuted = np.stack([grouped[g][:, local[g]] for g in range(groups)]).reshape(w.shape)
            node.inputs[1] = constant(f"{w.name}_permuted", permuted)
        else:
            node.attrs[INPUT_CHANNEL_ORDER] = [int(c) for c in order]

    def writes_permuted_channels(self, node: Node, order: np.ndarray, axis: int) -> bool:
        """Output channels reordered within their groups by reordering the weights' rows and the bias (no
        fused residual, which would have to be read permuted too)."""
        w, bias = node.inputs[1], node.input(2)
        return (axis == _channel_axis(node) and float_const(w) and (bias is None or float_const(bias))
                and node.input(self.epilogue_input) is None and _keeps_groups(order, w.shape[0] // int(node.attrs["group"])))

    def write_permuted_channels(self, node: Node, order: np.ndarray, axis: int, constant: MakeConstant) -> None:
        w, bias = node.inputs[1], node.input(2)
        node.inputs[1] = constant(f"{w.name}_permuted", w.data[order])
        if bias is not None:
            node.inputs[2] = constant(f"{bias.name}_permuted", bias.data[order])

    def writes_row_pitch(self, node: Node) -> bool:
        """Channels-last GEMM convolutions write C with a leading dimension (depthwise ones do not)."""
        group = int(node.attrs["group"])
        depthwise = group > 1 and node.inputs[1].shape[0] == group and _input_channels(node) == group
        return is_channels_last(node) and not depthwise

    def in_place_inputs(self, node: Node) -> list[int]:
        """The fused residual, when the lowering stages each tile's rows of it before the GEMM writes them
        (_residual_stage): the output may then overwrite it."""
        return [self.epilogue_input] if node.attrs.get(STAGED_RESIDUAL) else []

    def absorb_bias(self, node: Node, bias: np.ndarray) -> bool:
        y, old = node.outputs[0], node.input(2)
        padded = (1,) * (len(y.shape) - bias.ndim) + bias.shape
        if bias.ndim > len(y.shape) or any(d != 1 for i, d in enumerate(padded) if i != 1):
            return False  # not one value per output channel
        total = np.broadcast_to(bias.reshape(-1), (y.shape[1],)).astype(np.float32)
        if old is not None:
            if not old.is_const:
                return False
            total = total + old.data
        name = f"{old.name if old is not None else node.name + '_bias'}_fused"
        node.inputs = [*node.inputs[:2], Value(name, np.dtype(np.float32), total.shape, total), *node.inputs[3:]]
        return True

    def infer(self, node: Node):
        if is_channels_last(node):
            geo = conv_geometry(channels_first_view(node))
            x, w = node.inputs[0], node.inputs[1]
            return [(x.dtype, to_channels_last((x.shape[0], w.shape[0], *geo.out)))]
        geo = conv_geometry(node)
        x, w = node.inputs[0], node.inputs[1]
        return [(x.dtype, (x.shape[0], w.shape[0], *geo.out))]

    def lower(self, node: Node, ctx, epilogue: Epilogue | None = None) -> None:
        """epilogue: an activation and residual fused into the kernels (residual rows are output channels,
        columns output pixels, residual_batch_stride elements per image)."""
        if is_channels_last(node):
            self._lower_channels_last(node, ctx)
            return
        geo = conv_geometry(node)
        x, w, bias, y = node.inputs[0], node.inputs[1], node.input(2), node.outputs[0]
        images, channels = x.shape[0], x.shape[1]
        if epilogue is None:  # what passes/fuse_epilogues attached: rows are channels, columns pixels
            epilogue = node_epilogue(node, self.epilogue_input, geo.out_size, 1, y.size // max(images, 1))
        groups, out_channels = int(node.attrs["group"]), w.shape[0]
        group_in, group_out = channels // groups, out_channels // groups
        ctx.use_kernels("f32-conv")
        values = dict(fields=geo.fields(), x=ctx.ptr(x), w=ctx.ptr(w), y=ctx.ptr(y),
                      bias=ctx.ptr(bias) if bias is not None else "NULL", epilogue=None)
        if group_in == 1 and groups > 1:
            if epilogue is not None:
                values["epilogue"] = epilogue.fields(ctx, _offset((cexpr.index("n", images),
                                                                   epilogue.residual_batch_stride)))
            ctx.emit("ops/conv.c.j2", mode="depthwise", kernel=ctx.kernel("mlcc_f32_conv_depthwise"), images=images, n=cexpr.index("n", images),
                     channels=channels, multiplier=group_out,
                     x_image=channels * geo.in_size, y_image=out_channels * geo.out_size, **values)
            return
        tile = use_tile(ctx)
        k, pixels = group_in * geo.taps, geo.out_size
        nc = chunk_columns(k, pixels, tile.nr, budget=scratch_budget(ctx.target))
        if epilogue is not None:
            e = epilogue
            image, group_rows = ((f"t / {groups}u", group_out * e.residual_rs) if groups > 1
                                 else (cexpr.index("t", images), 0))
            values["epilogue"] = e.fields(ctx, _offset((image, e.residual_batch_stride), (cexpr.index("group", groups), group_rows),
                                                       ("p0", e.residual_cs)))
        ctx.emit("ops/conv.c.j2", mode="pointwise" if _is_pointwise(geo) else "im2col",
                 config=tile.config, nr=tile.nr, planes=images * groups, groups=groups,
                 t=cexpr.index("t", images * groups), group=cexpr.index("group", groups),
                 group_in=group_in, m=group_out, k=k, pixels=pixels, nc=nc,
                 x_plane=group_in * geo.in_size, y_plane=group_out * pixels, w_group=group_out * k,
                 group_bias="NULL" if bias is None else cexpr.offset(values["bias"], (cexpr.index("group", groups), group_out)),
                 scratch=ctx.scratch(4 * packed_size(k, nc, tile.nr), "columns"), **values)

    def _lower_channels_last(self, node: Node, ctx) -> None:
        """N[D]HWC activations (passes/choose_layout): output[pixel][M] = columns[pixel][K] * W^T[K][M], the
        weights packed at build time as B with K ordered (kd, kh, kw, c) like a channels-last pixel run. A
        1x1 stride-1 unpadded kernel reads the activations in place as A; depthwise runs a direct kernel
        with the channels innermost. The fused epilogue's rows are output pixels, columns channels."""
        geo = conv_geometry(channels_first_view(node))
        x, w, bias, y = node.inputs[0], node.inputs[1], node.input(2), node.outputs[0]
        images, channels = x.shape[0], _input_channels(node)
        groups, out_channels = int(node.attrs["group"]), w.shape[0]
        group_in, group_out, pixels = channels // groups, out_channels // groups, geo.out_size
        epilogue = node_epilogue(node, self.epilogue_input, out_channels, 1, pixels * out_channels)
        ctx.use_kernels("f32-conv")
        n = cexpr.index("n", images)
        values = dict(fields=geo.fields(), run_time=geo.run_time, x=ctx.ptr(x), y=ctx.ptr(y), images=images, n=n, channels=channels,
                      bias=ctx.ptr(bias) if bias is not None else "NULL", epilogue=None,
                      x_image=channels * geo.in_size, y_image=out_channels * pixels)
        y_pitch = output_row_pitch(ctx.graph, y) or out_channels
        depthwise = groups > 1 and group_in == 1 and group_out == 1
        staged = _stages_residual(node, ctx, epilogue, groups, y_pitch)
        # where memory binds, a convolution that needs columns and cannot write over its residual runs
        # direct: no workspace (VGG-19's second 224x224 convolution: two activations and nothing else)
        workspace_free = (ctx.target.memory_policy == "size" and not _is_pointwise(geo) and not depthwise
                          and not staged)
        algorithm = node.attrs.get("algorithm")  # passes/choose_winograd's, from a tuning file or the heuristic
        heuristic_direct = algorithm is None and (
            workspace_free or _conv_direct.applies(ctx.target, groups, group_in, group_out, geo.taps))
        order = node.attrs.get(INPUT_CHANNEL_ORDER)  # only the direct kernel reads through a table
        channels_first = reads_channels_first(node)
        if not depthwise and (algorithm == _conv_direct.ALGORITHM or heuristic_direct or order is not None
                              or channels_first):
            node.attrs["algorithm"] = _conv_direct.ALGORITHM  # what ran, for `mlcc tune` (mlcc/tune.py)
            if epilogue is not None:
                values["epilogue"] = epilogue.fields(ctx, _offset((n, epilogue.residual_batch_stride),
                                                                  (cexpr.index("group", groups), group_out)))
                # the parallel form advances the residual to each group itself
                values["epilogue_group0"] = epilogue.fields(ctx, _offset((n, epilogue.residual_batch_stride)))
            # W [groups * group_out, group_in, *kernel] -> [groups][(kernel..., group_in)][group_out]
            grouped = w.data.reshape(groups, group_out, group_in, *geo.kernel)
            values["x_channels"] = values["group_x_channels"] = "NULL"
            values["x_pixel_stride"] = channels
            if channels_first:  # one group: channel c's plane at c * H * W, its pixels one float apart
                planes = [c * geo.in_size for c in range(channels)]
                if any(cexpr.is_variable(p) for p in planes):  # run-time sizes: the table from the run's
                    values["x_channels"] = "(const int32_t[]){ " + ", ".join(
                        f"(int32_t){cexpr.text(p)}" if cexpr.is_variable(p) else str(p) for p in planes) + " }"
                else:
                    table = np.array(planes, np.int32)
                    values["x_channels"] = ctx.constant(
                        Value(f"{node.name}_input_planes", np.dtype(np.int32), table.shape, table))
                values["group_x_channels"] = values["x_channels"]
                values["x_pixel_stride"] = 1
            if order is not None:
                # each group's channels in the order they are stored, so the kernel reads runs of them, the
                # weights' input channels alike; the table: offsets from the group's own first channel
                stored = np.asarray(order, np.int64).reshape(groups, group_in)
                sort = np.argsort(stored, axis=1, kind="stable")
                grouped = np.stack([grouped[g][:, sort[g]] for g in range(groups)])
                table = (np.take_along_axis(stored, sort, axis=1)
                         - np.arange(groups).reshape(-1, 1) * group_in).astype(np.int32).reshape(-1)
                values["x_channels"] = ctx.constant(Value(f"{node.name}_input_channels", np.dtype(np.int32),
                                                          table.shape, table))
                values["group_x_channels"] = cexpr.offset(values["x_channels"], (cexpr.index("group", groups), group_in))
            b = grouped.transpose(0, *range(3, 3 + len(geo.kernel)), 2, 1).reshape(groups, -1, group_out)
            _conv_direct.lower(node, ctx, b, dict(
                values, geometry=geo, groups=groups, group=cexpr.index("group", groups), group_in=group_in, group_out=group_out, pixels=pixels,
                y_pitch=y_pitch, group_bias="NULL" if bias is None else cexpr.offset(values["bias"], (cexpr.index("group", groups), group_out))))
            return
        if depthwise:
            # f32-dwconv reads w as taps x channels: at each tap, the weights of a vector of channels
            taps = np.ascontiguousarray(w.data.reshape(channels, geo.taps).T, dtype=np.float32)
            ctx.use_kernels("f32-dwconv")
            if epilogue is not None:
                values["epilogue"] = epilogue.fields(ctx, _offset((n, epilogue.residual_batch_stride)))
            parallel = ctx.parallel()
            ctx.emit("ops/conv_nhwc.c.j2", mode="depthwise", parallel=parallel,
                     kernel=ctx.kernel("mlcc_f32_dwconv_nhwc_parallel" if parallel else "mlcc_f32_dwconv_nhwc"),
                     w=ctx.constant(Value(f"{w.name}_taps_by_channel", np.dtype(np.float32), taps.shape, taps)),
                     **values)
            return
        # passes/choose_winograd's, decided at the maximum; the kernels cut the tiles of the run's sizes
        if node.attrs.get("algorithm") == _winograd.ALGORITHM:
            if epilogue is not None:
                values["epilogue"] = epilogue.fields(ctx, _offset((n, epilogue.residual_batch_stride),
                                                                  (cexpr.index("group", groups), group_out)))
            _winograd.lower(node, ctx, geo, dict(values, y_pitch=y_pitch), groups, group_in, group_out)
            return
        k, spatial = group_in * geo.taps, len(geo.kernel)
        node.attrs["algorithm"] = tuning.IM2COL
        tile = use_tile(ctx, group_out)
        # W [groups * group_out, group_in, *kernel] -> B [groups][(kernel..., group_in)][group_out]
        grouped = w.data.reshape(groups, group_out, group_in, *geo.kernel)
        b = grouped.transpose(0, *range(3, 3 + spatial), 2, 1).reshape(groups, k, group_out)
        packed = ctx.constant(packed_constant(w, b, tile.nr, "channels_last_packed"))
        # y_pitch > out_channels: y is a channel slice of a Concat's output, written in place
        values.update(config=tile.config, groups=groups, group_in=group_in, group_out=group_out, k=k,
                      y_pitch=y_pitch, pixels=pixels, w=packed, w_group=packed_size(k, group_out, tile.nr),
                      group=cexpr.index("group", groups),
                      group_bias="NULL" if bias is None else cexpr.offset(values["bias"], (cexpr.index("group", groups), group_out)))
        if _is_pointwise(geo):
            if epilogue is not None:
                values["epilogue"] = epilogue.fields(ctx, _offset((cexpr.index("group", groups), group_out)))
                values["epilogue_group0"] = epilogue.fields(ctx)  # the grouped parallel form advances it
            ctx.emit("ops/conv_nhwc.c.j2", mode="pointwise", rows=images * pixels, parallel=ctx.parallel(), **values)
            return
        # chunks for the largest image (the last chunk of each is clipped at run time)
        chunk = min(cexpr.bound(pixels), max(tile.mr, scratch_budget(ctx.target) // (4 * k) // tile.mr * tile.mr))
        stage = _residual_stage(node, ctx, epilogue, chunk) if staged else None
        if stage is not None:
            values["epilogue"] = dict(epilogue.fields(ctx), residual=stage["rows"])
        elif epilogue is not None:
            values["epilogue"] = epilogue.fields(ctx, _offset((cexpr.offset("p0", (n, pixels)), out_channels),
                                                                 (cexpr.index("group", groups), group_out)))
        ctx.emit("ops/conv_nhwc.c.j2", mode="im2col", chunk=chunk, scratch=ctx.scratch(4 * chunk * k, "columns"),
                 stage=stage, parallel=ctx.parallel(), **values)

    def flops(self, node: Node) -> int:
        geo = conv_geometry(channels_first_view(node) if is_channels_last(node) else node)
        x, w = node.inputs[0], node.inputs[1]
        macs = x.shape[0] * w.shape[0] * geo.out_size * w.shape[1] * geo.taps
        return 2 * macs
