"""Identity: output = input. The remove_identities pass drops it; without that pass the memory planner
makes the output a view of the input (a copy where it cannot)."""

from __future__ import annotations

from ..ir import Node
from . import Op, register
from ._copy import emit_memcpy
from ._views import View, reshaped, unreshaped


@register
class Identity(Op):
    op_type = "Identity"
    removable_identity = True
    inplace_safe = True
    view_of_input = True

    def strided_view(self, node: Node, view: View) -> View | None:
        return reshaped(node, view)

    def input_view(self, node: Node, view: View) -> View | None:
        return unreshaped(node, view)

    def lower(self, node: Node, ctx) -> None:
        emit_memcpy(ctx, node.outputs[0], node.inputs[0])
