"""Dropout: at inference the output is the input and the optional mask is all true.

Training mode (the `training_mode` input, opset 12+) draws random numbers; mlcc compiles inference graphs,
so only an absent or constant-false training_mode is accepted. The remove_identities pass drops the node;
without that pass (-O0) it lowers to a copy plus a fill of the mask.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import Region, emit_memcpy, emit_regions, fill_literal


@register
class Dropout(Op):
    op_type = "Dropout"
    attrs = {"ratio": 0.5, "seed": None}
    removable_identity = True
    inplace_safe = True

    def forwards_input(self, node: Node) -> bool:
        training = node.input(2)
        return training is None or (training.is_const and not bool(np.asarray(training.data).reshape(-1)[0]))

    def infer(self, node: Node):
        x = node.inputs[0]
        mask = np.dtype(np.bool_) if node.opset >= 10 else x.dtype  # the data's type before opset 10
        return [(x.dtype, x.shape), (mask, x.shape)][:len(node.outputs)]

    def lower(self, node: Node, ctx) -> None:
        if not self.forwards_input(node):
            raise UnsupportedError("training-mode Dropout is random; mlcc compiles inference graphs only "
                                   "(training_mode must be absent or a constant false)", node.where())
        emit_memcpy(ctx, node.outputs[0], node.inputs[0])
        mask = node.outputs[1] if len(node.outputs) > 1 and node.outputs[1].name else None
        if mask is not None:
            emit_regions(ctx, mask, None, [(Region([mask.size], [1]), "inference: nothing dropped")],
                         fill=fill_literal(1, mask.dtype))
