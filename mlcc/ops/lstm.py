"""LSTM (opsets 1-22): a one-layer long short-term memory, gates in ONNX order i, o, f, c:
    i = f(Xt Wi^T + Ht-1 Ri^T + Pi * Ct-1 + Wbi + Rbi)     f = f(... Pf * Ct-1 ...), or 1 - i (input_forget)
    c = g(Xt Wc^T + Ht-1 Rc^T + Wbc + Rbc)                  Ct = f * Ct-1 + i * c
    o = f(Xt Wo^T + Ht-1 Ro^T + Po * Ct + Wbo + Rbo)        Ht = o * h(Ct)
with f = Sigmoid, g = h = Tanh by default. The frame (directions, layouts, sequence_lens, states, weights
packing) is _recurrent's; here is the cell.
"""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._recurrent import COMMON_ATTRS, Cell, Direction, Lowering, at, clipped, flops, reference

CELL = Cell(gates=4, default_activations=("Sigmoid", "Tanh", "Tanh"), step_template="ops/recurrent_lstm.c.j2",
            states=2)
INITIAL_C, P = 6, 7


def _step(d: Direction, gates_x: np.ndarray, h: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f, g, act_h = d.acts
    gates = gates_x + h @ d.r.T + d.rb
    xi, xo, xf, xc = np.split(gates, 4, axis=-1)
    p_i, p_o, p_f = np.split(d.extra["p"], 3)
    i = f(clipped(xi + p_i * c, d.clip))
    forget = 1 - i if d.extra["input_forget"] else f(clipped(xf + p_f * c, d.clip))
    c = forget * c + i * g(clipped(xc, d.clip))
    o = f(clipped(xo + p_o * c, d.clip))
    return o * act_h(c), c


def _recurrent(low: Lowering, d: int, h: str, h_stride: int, packs: list) -> dict:
    p = low.node.input(P)
    peephole = "NULL" if p is None or (p.is_const and not np.any(p.data)) else at(low.ctx.ptr(p), d * 3 * low.g.hidden)
    return dict(recurrent=[low.recurrent_product(d, slice(0, low.gh), "", h, h_stride, packs)], peephole=peephole)


@register
class LSTM(Op):
    op_type = "LSTM"
    variable_extents = True  # a run-time sequence length: the time loop and input projections take it
    attrs = {**COMMON_ATTRS, "input_forget": 0}

    def reference(self, node: Node, inputs: list) -> list[np.ndarray]:
        hidden, dirs = node.inputs[2].shape[2], node.inputs[2].shape[0]
        p = inputs[P] if len(inputs) > P and inputs[P] is not None else np.zeros((dirs, 3 * hidden), np.float32)
        extra = lambda d: dict(p=p[d], input_forget=bool(node.attrs["input_forget"]))
        return reference(node, inputs, CELL, _step, extra)

    def lower(self, node: Node, ctx) -> None:
        low = Lowering(node, ctx, CELL)
        p = node.input(P)
        if p is not None and p.shape != (low.g.directions, 3 * low.g.hidden):
            raise UnsupportedError(f"P {p.type_str()} is not [{low.g.directions}, {3 * low.g.hidden}]", node.where())
        low.emit(_recurrent, input_forget="true" if node.attrs["input_forget"] else "false")

    def flops(self, node: Node) -> int:
        return flops(node, CELL)
