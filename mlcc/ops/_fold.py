"""What the ops that fold a per-output-channel scale and shift into their weights share (Op.fold_scale_shift,
asked by passes/fold_batch_norm). Folded values are computed in float64 and stored in the weights' dtype."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..ir import Node, Value

MakeConstant = Callable[[str, np.ndarray], Value]


def float_const(v: Value | None) -> bool:
    return v is not None and v.is_const and v.dtype.kind == "f"


def scaled_bias(node: Node, scale, shift, constant: MakeConstant, index: int = 2) -> Value:
    """The node's bias (input `index`, absent = 0) times scale plus shift, as a new [C] constant."""
    old = node.input(index)
    base = old.data.astype(np.float64).reshape(-1) if old is not None else 0.0
    dtype = old.dtype if old is not None else node.inputs[1].dtype
    return constant(f"{node.name}_bias_folded", (base * scale + shift).astype(dtype))
