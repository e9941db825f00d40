"""MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters spaced evenly on the mel scale
(mel = 2595 log10(1 + hz / 700)) between lower_edge_hertz and upper_edge_hertz, computed as onnx's
reference does (filter edges are spectrogram bins, floor((dft_length + 1) * hz / sample_rate)).

num_mel_bins and dft_length decide the shape: they must be known at build time; with every input known
the frontend folds the node. Otherwise templates/ops/mel_weight_matrix.c.j2 computes it from the run-time
sample rate and edges, in double.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import const_ints


def _sizes(node: Node) -> tuple[int, int]:
    """(num_mel_bins, dft_length)."""
    mel_bins, length = const_ints(node, 0, "num_mel_bins")[0], const_ints(node, 1, "dft_length")[0]
    if mel_bins < 1 or length < 1:
        raise UnsupportedError(f"MelWeightMatrix with {mel_bins} mel bins of a {length}-point DFT", node.where())
    return mel_bins, length


@register
class MelWeightMatrix(Op):
    op_type = "MelWeightMatrix"
    attrs = {"output_datatype": 1}

    def infer(self, node: Node):
        from .. import dtypes

        mel_bins, length = _sizes(node)
        return [(dtypes.from_onnx(int(node.attrs["output_datatype"]), node.where()), (length // 2 + 1, mel_bins))]

    def lower(self, node: Node, ctx) -> None:
        mel_bins, length = _sizes(node)
        rate, lower, upper = node.inputs[2], node.inputs[3], node.inputs[4]
        y = node.outputs[0]
        if y.dtype == np.float16 or lower.dtype not in (np.float32, np.float64) or upper.dtype != lower.dtype:
            raise UnsupportedError(f"MelWeightMatrix of {lower.type_str()} edges to {y.dtype.name}", node.where())
        suffix = "f" if lower.dtype == np.float32 else ""
        ctx.emit("ops/mel_weight_matrix.c.j2", y=ctx.ptr(y), y_type=ctx.c_type(y), edge_type=ctx.c_type(lower),
                 rate=ctx.ptr(rate), lower=ctx.ptr(lower), upper=ctx.ptr(upper), log1p=f"log1p{suffix}",
                 mel_bins=mel_bins, length=length, spectrum_bins=length // 2 + 1,
                 edges=ctx.scratch(8 * (mel_bins + 2), "edges", dtype=np.int64))
