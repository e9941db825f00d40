"""CastLike: Cast to the element type of a second input, whose values are never read (so a constant input
folds even when the second one is computed at run time)."""

from __future__ import annotations

from .. import dtypes
from ..ir import Node
from . import Op, register, run_onnx_reference
from .cast import lower_cast


@register
class CastLike(Op):
    op_type = "CastLike"
    attrs = {"saturate": 1, "round_mode": "up"}
    elementwise = True
    float16_native = True
    type_only_operands = (1,)

    def reference(self, node: Node, inputs: list):
        # as the Cast it is (onnx's reference CastLike refuses round_mode, and the target may have no values)
        cast = Node("Cast", node.name, node.inputs[:1], node.outputs,
                    {**node.attrs, "to": dtypes.to_onnx(node.outputs[0].dtype)}, "", node.opset)
        return run_onnx_reference(cast, inputs[:1])

    def lower(self, node: Node, ctx) -> None:
        lower_cast(ctx, node.inputs[0], node.outputs[0], [node.inputs[1]])
