"""LpPool (opset 1..22): the p-norm of each window, (sum |x|^p)^(1/p), over 1-D to 3-D windows with strides,
pads, auto_pad, and from opset 18 dilations and ceil_mode. Taps in the padding count as zeros."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._pool import POOL_ATTRS, geometry, lower_pool_loops, pool_types


@register
class LpPool(Op):
    op_type = "LpPool"
    attrs = {**POOL_ATTRS, "dilations": None, "p": 2}

    def infer(self, node: Node):
        return pool_types(node)

    def lower(self, node: Node, ctx) -> None:
        p = node.attrs["p"]
        if isinstance(p, float) and not p.is_integer() or p < 1:  # opset 1 took a float
            raise UnsupportedError(f"p={p} (a positive integer is required)", node.where())
        lower_pool_loops(node, ctx, "lp", p=int(p))

    def flops(self, node: Node) -> int:
        return node.outputs[0].size * (2 * geometry(node).taps + 1)
