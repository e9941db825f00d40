"""RNN (opsets 1-22): a one-layer Elman network, Ht = f(Xt W^T + Wb + Ht-1 R^T + Rb), f = Tanh by default.

The frame (directions, layouts, sequence_lens, states, weights packing) is _recurrent's; here is the cell.
"""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._recurrent import COMMON_ATTRS, Cell, Direction, Lowering, clipped, flops, reference

CELL = Cell(gates=1, default_activations=("Tanh",), step_template="ops/recurrent_rnn.c.j2")


def _step(d: Direction, gates_x: np.ndarray, h: np.ndarray, c) -> tuple[np.ndarray, None]:
    return d.acts[0](clipped(gates_x + h @ d.r.T + d.rb, d.clip)), None


def _recurrent(low: Lowering, d: int, h: str, h_stride: int, packs: list) -> dict:
    return dict(recurrent=[low.recurrent_product(d, slice(0, low.gh), "", h, h_stride, packs)])


@register
class RNN(Op):
    op_type = "RNN"
    variable_extents = True  # a run-time sequence length: the time loop and input projections take it
    attrs = dict(COMMON_ATTRS)

    def reference(self, node: Node, inputs: list) -> list[np.ndarray]:
        return reference(node, inputs, CELL, _step)

    def lower(self, node: Node, ctx) -> None:
        Lowering(node, ctx, CELL).emit(_recurrent)

    def flops(self, node: Node) -> int:
        return flops(node, CELL)
