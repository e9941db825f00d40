"""OptionalGetElement of a plain tensor is that tensor (opset 18 accepts tensors): an identity that the
remove_identities pass forwards, else a copy. An omitted input (an empty optional) has no element to get,
and optional- or sequence-typed values are refused by the frontend before they get here."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register
from ._copy import emit_memcpy


@register
class OptionalGetElement(Op):
    op_type = "OptionalGetElement"
    removable_identity = True
    inplace_safe = True

    def infer(self, node: Node):
        x = node.input(0)
        if x is None:
            raise UnsupportedError("OptionalGetElement of an empty optional (omitted input) has no element", node.where())
        return [(x.dtype, x.shape)]

    def reference(self, node: Node, inputs):
        return [inputs[0].copy()]

    def lower(self, node: Node, ctx) -> None:
        emit_memcpy(ctx, node.outputs[0], node.inputs[0])
