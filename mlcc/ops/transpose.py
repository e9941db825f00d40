"""Transpose: a loop nest walking the output in order and the input by permuted strides."""

from __future__ import annotations

from ..errors import ShapeError
from ..ir import Node
from . import Op, Role, register
from ._copy import emit_regions, transpose_region
from ._views import View


@register
class Transpose(Op):
    op_type = "Transpose"
    attrs = {"perm": None}  # default: reverse the dims
    role = Role.TRANSPOSE
    quantized_form = "moves"  # on the 8-bit values between DQ and Q (passes/lower_quantized_islands)
    variable_extents = True  # an affine copy over run-time extents

    def perm(self, node: Node) -> list[int]:
        rank = len(node.inputs[0].shape)
        perm = [int(p) for p in node.attrs.get("perm", range(rank - 1, -1, -1))]
        if sorted(p % rank if rank else p for p in perm) != list(range(rank)):
            raise ShapeError(f"perm {perm} is not a permutation of {rank} dims", node.where())
        return [p % rank for p in perm]

    def strided_view(self, node: Node, view: View) -> View:
        perm = node.attrs.get("perm") or list(range(len(view.shape)))[::-1]
        return View(view.value, view.offset, tuple(view.shape[p] for p in perm), tuple(view.strides[p] for p in perm))

    def input_view(self, node: Node, view: View) -> View:
        perm = node.attrs.get("perm") or list(range(len(view.shape)))[::-1]
        strides = [0] * len(perm)
        for i, p in enumerate(perm):
            strides[p] = view.strides[i]
        return View(view.value, view.offset, tuple(node.inputs[0].shape), tuple(strides))

    def lower(self, node: Node, ctx) -> None:
        region = transpose_region(node.inputs[0].shape, self.perm(node))
        emit_regions(ctx, node.outputs[0], node.inputs[0], [(region, "")])
