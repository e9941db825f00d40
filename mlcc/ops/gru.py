"""GRU (opsets 1-22): a one-layer gated recurrent unit, gates in ONNX order z, r, h:
    z = f(Xt Wz^T + Ht-1 Rz^T + Wbz + Rbz)      r = f(Xt Wr^T + Ht-1 Rr^T + Wbr + Rbr)
    h = g(Xt Wh^T + (r * Ht-1) Rh^T + Rbh + Wbh)             (linear_before_reset = 0)
    h = g(Xt Wh^T + r * (Ht-1 Rh^T + Rbh) + Wbh)             (linear_before_reset != 0)
    Ht = (1 - z) * h + z * Ht-1
with f = Sigmoid, g = Tanh by default. Without linear_before_reset a step takes two products: z and r by
R_zr, then (r * Ht-1) by R_h. The frame (directions, layouts, sequence_lens, states, weights packing) is
_recurrent's; here is the cell.
"""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._recurrent import COMMON_ATTRS, Cell, Direction, Lowering, clipped, flops, reference

CELL = Cell(gates=3, default_activations=("Sigmoid", "Tanh"), step_template="ops/recurrent_gru.c.j2")


def _step(d: Direction, gates_x: np.ndarray, h: np.ndarray, c) -> tuple[np.ndarray, None]:
    f, g = d.acts
    n = h.shape[-1]
    r_zr, r_h = d.r[:2 * n], d.r[2 * n:]
    zr = f(clipped(gates_x[:, :2 * n] + h @ r_zr.T + d.rb[:2 * n], d.clip))
    z, r = zr[:, :n], zr[:, n:]
    if d.extra["linear_before_reset"]:
        pre = gates_x[:, 2 * n:] + r * (h @ r_h.T + d.rb[2 * n:])
    else:
        pre = gates_x[:, 2 * n:] + (r * h) @ r_h.T + d.rb[2 * n:]
    return (1 - z) * g(clipped(pre, d.clip)) + z * h, None


def _recurrent(low: Lowering, d: int, h: str, h_stride: int, packs: list) -> dict:
    n = low.g.hidden
    if low.node.attrs.get("linear_before_reset"):
        return dict(recurrent=[low.recurrent_product(d, slice(0, 3 * n), "", h, h_stride, packs)], reset_hidden="NULL")
    rh = low.shared_scratch("reset_hidden", low.g.batch * n)  # r * Ht-1, the operand of the product by R_h
    return dict(recurrent=[low.recurrent_product(d, slice(0, 2 * n), "_zr", h, h_stride, packs),
                           low.recurrent_product(d, slice(2 * n, 3 * n), "_h", rh, n, packs)],
                reset_hidden=rh)


@register
class GRU(Op):
    op_type = "GRU"
    variable_extents = True  # a run-time sequence length: the time loop and input projections take it
    attrs = {**COMMON_ATTRS, "linear_before_reset": 0}

    def reference(self, node: Node, inputs: list) -> list[np.ndarray]:
        extra = lambda d: dict(linear_before_reset=bool(node.attrs.get("linear_before_reset")))
        return reference(node, inputs, CELL, _step, extra)

    def lower(self, node: Node, ctx) -> None:
        lbr = "true" if node.attrs.get("linear_before_reset") else "false"
        Lowering(node, ctx, CELL).emit(_recurrent, linear_before_reset=lbr)

    def flops(self, node: Node) -> int:
        return flops(node, CELL)
