"""Mark the channels-last 3x3 stride-1 and 5x5 stride-1 or -2 convolutions that run as Winograd F(4x4, 3x3)
(mlcc/ops/_winograd.py) on the target: the nodes whose op answers `Op.winograd_extra_bytes`.

A choice of algorithm, not a rewrite: the mark (attr `algorithm`) tells Conv's lowering to take the
transforms around f32-gemm. It trades four times the 3x3 weights (5.76 times the 5x5 ones) and about 1e-5
of the output's scale in rounding for a quarter (0.36) of the multiply-adds; `--disable-pass
choose_winograd` (or -O1) keeps the direct convolutions. Under weights_policy "model" the blob keeps the
model's kernels and the transformed weights are prepared at load time in the arena
(_winograd.prepared_at_load). Runs after choose_layout, which decides what is channels-last.

A tuning file (`mlcc build --tuning`, mlcc/tuning.py) overrides the heuristic per layer signature with any
algorithm the node's op offers (`Op.algorithms`: "im2col", "winograd_f4x3", "direct"), marked the same way."""

from __future__ import annotations

from .. import ops, tuning
from ..ir import Graph
from ..ops import _winograd
from ..targets import Target


def run(graph: Graph, target: Target) -> dict:
    marked, extra_bytes, tuned = 0, 0, 0
    for node in graph.nodes:
        op = ops.of(node)
        if op is None:
            continue
        chosen = tuning.choice(target, node, "algorithm")
        if chosen not in op.algorithms(node, target):
            chosen = None  # no tuning, or a choice that does not apply to this node: the heuristic's
        if chosen is not None:
            node.attrs["algorithm"] = chosen
            tuned += 1
        extra = op.winograd_extra_bytes(node, target, measured=chosen == _winograd.ALGORITHM)
        if extra is not None and chosen in (None, _winograd.ALGORITHM):
            node.attrs["algorithm"] = _winograd.ALGORITHM
            marked += 1
            extra_bytes += extra
    done = {"convolutions": marked, **({"tuned": tuned} if tuned else {})}
    if _winograd.prepared_at_load(target):  # the blob keeps the model's kernels; the arena holds the transforms
        return {**done, "extra_weight_bytes": 0, "prepared_at_load": marked > 0}
    return {**done, "extra_weight_bytes": extra_bytes}
