"""Ops that only relabel a tensor's shape: Reshape, Flatten, Squeeze, Unsqueeze. The bytes do not move, so
each lowers to one memcpy, which the memory planner drops when the output can alias the input. Shapes come
from onnx's inference; ours is only the check that the input fixing the new shape is known at build time.
"""

from __future__ import annotations

from ..errors import ShapeError
from ..ir import Node
from . import Op, Role, register_family
from ._copy import const_ints, emit_memcpy
from ._views import View, reshaped, unreshaped

# op_type -> (attribute spec, the input naming the new shape or axes (None: attrs only), its name)
TABLE = {
    "Reshape": ({"allowzero": 0}, 1, "shape"),
    "Flatten": ({"axis": 1}, None, ""),
    "Squeeze": ({"axes": None}, 1, "axes"),  # axes: attribute before opset 13, input from 13
    "Unsqueeze": ({"axes": None}, 1, "axes"),
}


def _make(op_type: str, row) -> type[Op]:
    spec, shape_input, what = row

    class ReshapeLike(Op):
        attrs = dict(spec)
        inplace_safe = True
        view_of_input = True  # the planner aliases the output to the input; the memcpy is then not emitted
        relabels_shape = True
        quantized_form = "moves"  # on the 8-bit values between DQ and Q (passes/lower_quantized_islands)
        variable_extents = True  # the same elements, whatever their run-time count
        parameter_operands = () if shape_input is None else (shape_input,)
        role = Role.RESHAPE if op_type == "Reshape" else None

        def strided_view(self, node: Node, view: View) -> View | None:
            return reshaped(node, view)

        def input_view(self, node: Node, view: View) -> View | None:
            return unreshaped(node, view)

        def infer(self, node: Node):
            if shape_input is not None:
                const_ints(node, shape_input, what)
            return None  # onnx's inference, given that constant

        def lower(self, node: Node, ctx) -> None:
            if node.outputs[0].size != node.inputs[0].size:  # onnx's inference does not check this
                raise ShapeError(f"cannot reshape {node.inputs[0].size} elements {list(node.inputs[0].shape)} into "
                                 f"{node.outputs[0].size} {list(node.outputs[0].shape)}", node.where())
            emit_memcpy(ctx, node.outputs[0], node.inputs[0])

    ReshapeLike.op_type = op_type
    ReshapeLike.__name__ = ReshapeLike.__qualname__ = op_type
    return ReshapeLike


register_family(_make, TABLE)
