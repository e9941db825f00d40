"""GlobalLpPool: y[n, c] = (sum of |x[n, c]|^p over the whole plane)^(1/p); LpPool's lowering with one window
covering the flattened spatial dims."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._pool import PoolGeometry
from .lp_pool import lower_lp_pool


@register
class GlobalLpPool(Op):
    op_type = "GlobalLpPool"
    attrs = {"p": 2}

    def infer(self, node: Node):
        x = node.inputs[0]
        if len(x.shape) < 2:
            raise UnsupportedError(f"GlobalLpPool needs an input of rank 2 or more, not {len(x.shape)}", node.where())
        return [(x.dtype, (*x.shape[:2], *[1] * (len(x.shape) - 2)))]

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        size = int(np.prod(x.shape[2:], dtype=np.int64))
        g = PoolGeometry(planes=int(x.shape[0] * x.shape[1]), inp=[1, 1, size], out=[1, 1, 1], kernel=[1, 1, size],
                         stride=[1, 1, 1], dilation=[1, 1, 1], pad_begin=[0, 0, 0], pad_end=[0, 0, 0])
        lower_lp_pool(node, ctx, g, float(node.attrs["p"]))

    def flops(self, node: Node) -> int:
        return 2 * node.inputs[0].size
