"""Mark the channels-last 3x3 stride-1 and 5x5 stride-1 or -2 convolutions that run as Winograd F(4x4, 3x3)
(mlcc/ops/_winograd.py) on the target: the nodes whose op answers `Op.winograd_extra_bytes`.

A choice of algorithm, not a rewrite: the mark (attr `algorithm`) tells Conv's lowering to take the
transforms around f32-gemm. It trades four times the 3x3 weights (5.76 times the 5x5 ones) and about 1e-5
of the output's scale in rounding for a quarter (0.36) of the multiply-adds; `--disable-pass
choose_winograd` (or -O1) keeps the direct convolutions. Under weights_policy "model" the blob keeps the
model's kernels and the transformed weights are prepared at load time in the arena
(_winograd.prepared_at_load). Runs after choose_layout, which decides what is channels-last."""

from __future__ import annotations

from .. import ops
from ..ir import Graph
from ..ops import _winograd
from ..targets import Target


def run(graph: Graph, target: Target) -> dict:
    marked, extra_bytes = 0, 0
    for node in graph.nodes:
        op = ops.of(node)
        extra = None if op is None else op.winograd_extra_bytes(node, target)
        if extra is not None:
            node.attrs["algorithm"] = _winograd.ALGORITHM
            marked += 1
            extra_bytes += extra
    if _winograd.prepared_at_load(target):  # the blob keeps the model's kernels; the arena holds the transforms
        return {"convolutions": marked, "extra_weight_bytes": 0, "prepared_at_load": marked > 0}
    return {"convolutions": marked, "extra_weight_bytes": extra_bytes}
