"""Mark the channels-last 3x3 stride-1 and 5x5 stride-1 or -2 convolutions that run as Winograd F(4x4, 3x3)
(mlcc/ops/_winograd.py).

A choice of algorithm, not a rewrite: the mark (attr `algorithm`) tells Conv's lowering to take the
transforms around f32-gemm. It trades four times the 3x3 weights (5.76 times the 5x5 ones) and about 1e-5
of the output's scale in rounding for a quarter (0.36) of the multiply-adds; `--disable-pass
choose_winograd` (or -O1) keeps the direct convolutions. Runs after choose_layout, which decides what is
channels-last."""

from __future__ import annotations

import numpy as np

from ..ir import Graph
from ..ops import _winograd
from ..ops._conv import conv_geometry
from ..ops._layout import channels_first_view, is_channels_last


def run(graph: Graph) -> dict:
    target = getattr(graph, "target", None)
    if target is None:
        return {"convolutions": 0, "extra_weight_bytes": 0}
    marked, extra_bytes = 0, 0
    for node in graph.nodes:
        if node.op_type != "Conv" or node.domain not in ("", "ai.onnx") or not is_channels_last(node):
            continue
        w = node.inputs[1]
        if not w.is_const or node.inputs[0].dtype != np.float32:
            continue
        geo = conv_geometry(channels_first_view(node))
        groups = int(node.attrs.get("group", 1))
        channels = node.inputs[0].shape[-1]
        if _winograd.applies(target, geo, groups, channels // groups, w.shape[0] // groups):
            node.attrs["algorithm"] = _winograd.ALGORITHM
            marked += 1
            # 36 transformed points per 3x3 piece of each channel pair, for its 9 or 25 taps
            transformed = _winograd.POINTS * _winograd.pieces(geo) * w.size // geo.taps
            extra_bytes += (transformed - w.size) * 4
    return {"convolutions": marked, "extra_weight_bytes": extra_bytes}
