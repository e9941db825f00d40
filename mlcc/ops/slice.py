"""Slice: a strided copy. starts/ends/axes are attributes before opset 10; from 10 they are inputs, with
optional axes and steps. Indices follow Python's slice semantics exactly (negative counts from the end,
out-of-range values clamp, negative steps walk backwards), so `slice.indices(dim)` does the clamping.
"""

from __future__ import annotations

from ..cexpr import VariableExtentError, is_variable
from ..errors import ShapeError
from ..ir import Node
from . import Op, register
from ._copy import Region, const_ints, contiguous_strides, emit_regions, normalize_axis
from ._views import View, const_ints as known_ints


def _slice_params(node: Node, rank: int):
    """(axis, start, end, step) per sliced axis when all are known at build time, else None."""
    if node.input(1) is not None:
        starts, ends = known_ints(node.inputs[1]), known_ints(node.input(2))
        axes = known_ints(node.input(3)) if node.input(3) is not None else list(range(len(starts or [])))
        steps = known_ints(node.input(4)) if node.input(4) is not None else [1] * len(starts or [])
    else:
        starts, ends = node.attrs.get("starts"), node.attrs.get("ends")
        axes = node.attrs.get("axes") or list(range(len(starts or [])))
        steps = [1] * len(starts or [])
    if None in (starts, ends, axes, steps):
        return None
    return [(a % rank, s, e, st) for a, s, e, st in zip(axes, starts, ends, steps)]


@register
class Slice(Op):
    op_type = "Slice"
    attrs = {"starts": None, "ends": None, "axes": None}  # attributes before opset 10
    view_of_input = True
    variable_extents = True  # counts from the output's run-time extents (see _run_time_walk)
    parameter_operands = (1, 2, 3, 4)

    def params(self, node: Node) -> tuple[list[int], list[int], list[int] | None, list[int] | None]:
        if node.opset < 10:
            return list(node.attrs.get("starts", [])), list(node.attrs.get("ends", [])), node.attrs.get("axes"), None
        return (const_ints(node, 1, "starts"), const_ints(node, 2, "ends"), const_ints(node, 3, "axes"),
                const_ints(node, 4, "steps"))

    def walk(self, node: Node) -> tuple[list[int], list[int], list[int]]:
        """Per input axis: the first index read, the step, and the count."""
        x = node.inputs[0]
        rank = len(x.shape)
        starts, ends, axes, steps = self.params(node)
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise ShapeError("starts, ends, axes and steps differ in length", node.where())
        first, step, count = [0] * rank, [1] * rank, list(x.shape)
        for axis, start, end, st in zip(axes, starts, ends, steps):
            if st == 0:
                raise ShapeError("a slice step is 0", node.where())
            a = normalize_axis(axis, rank, node)
            first[a], stop, step[a] = slice(start, end, st).indices(x.shape[a])
            count[a] = len(range(first[a], stop, step[a]))
        return first, step, count

    def _run_time_walk(self, node: Node) -> tuple[list, list[int], list]:
        """walk() where sizes vary (mlcc/extents.py): the counts are the output's run-time extents; a start
        may be shape arithmetic (a KV cache's causal mask row, at the past length) if it counts from the
        beginning at every size, steps go forward, and the last index read stays inside the axis."""
        x, out = node.inputs[0], node.outputs[0]
        starts, _, axes, steps = self.params(node)
        axes = list(range(len(starts))) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        if any(s < 0 for s in starts) or any(is_variable(s) or s <= 0 for s in steps):
            raise VariableExtentError("its starts count from the end or its steps go backwards or change with the size")
        rank = len(x.shape)
        first, step = [0] * rank, [1] * rank
        for axis, start, st in zip(axes, starts, steps):
            a = normalize_axis(axis, rank, node)
            first[a], step[a] = start, st
        count = list(out.shape)
        for a in range(rank):
            if is_variable(first[a]) and not first[a] + (count[a] - 1) * step[a] < x.shape[a]:
                raise VariableExtentError(f"its start on axis {a} reads past the end at some size")
        return first, step, count

    def _varying_params(self, node: Node) -> bool:
        return any(v is not None and v.variable_data is not None for v in node.inputs[1:])

    def view_offsets(self, node: Node) -> list[int] | None:
        """The output is one contiguous range of the input when the axes before some axis keep one index,
        that axis steps forward by 1 and every later axis is whole."""
        x = node.inputs[0]
        if self._varying_params(node):
            return None  # its place in the input changes with the size: a copy
        first, step, count = self.walk(node)
        axis = next((a for a in range(len(count)) if count[a] != 1), len(count))
        if axis < len(count) and step[axis] != 1:
            return None
        if any(count[a] != x.shape[a] or step[a] != 1 for a in range(axis + 1, len(count))):
            return None
        offset = sum(f * k for f, k in zip(first, contiguous_strides(x.shape)))
        return [offset * x.dtype.itemsize]

    def strided_view(self, node: Node, view: View) -> View | None:
        """Constant parameters with forward steps pick a strided view."""
        params = _slice_params(node, len(view.shape))
        if params is None:
            return None
        offset, shape, strides = view.offset, list(view.shape), list(view.strides)
        for axis, start, end, step in params:
            picked = range(shape[axis])[slice(start, end, step)]
            if step == 0 or len(picked) == 0:
                return None
            offset += picked[0] * strides[axis]
            shape[axis], strides[axis] = len(picked), strides[axis] * step
        if any(s < 0 for s in strides) or tuple(shape) != tuple(node.outputs[0].shape):
            return None
        return View(view.value, offset, tuple(shape), tuple(strides))

    def infer(self, node: Node):
        return [(node.inputs[0].dtype, tuple(self.walk(node)[2]))]  # onnx infers none for opset-1 negative axes

    def lower(self, node: Node, ctx) -> None:
        x = node.inputs[0]
        if any(is_variable(d) for d in [*x.shape, *node.outputs[0].shape]) or self._varying_params(node):
            first, step, count = self._run_time_walk(node)
        else:
            first, step, count = self.walk(node)
        strides = contiguous_strides(x.shape)
        region = Region(count, contiguous_strides(count), [s * k for s, k in zip(step, strides)],
                        src_offset=sum(f * k for f, k in zip(first, strides)))
        emit_regions(ctx, node.outputs[0], x, [(region, "")])
