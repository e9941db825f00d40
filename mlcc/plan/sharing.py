"""Which tensors share bytes, decided over one schedule before any offset is chosen.

Three kinds of sharing, decided in this order (each later one sees the earlier ones' effect on lifetimes):
  concat    a Concat whose inputs are contiguous ranges of its output has each producer write straight into
            its range; the Concat step emits no code ("elided"). Every input must be a tensor some step
            writes (not a graph input, output or constant), used by no other Concat, and used once here.
            A Concat along the last axis (channels-last channels) whose inputs' producers write their rows
            at its row pitch (ops.concat.channel_slices: the lowering already did) has each input strided
            in its output ("strided": rows of the input's last dim, `pitch` bytes apart); such an input
            is read by that Concat alone, so nothing ever sees it contiguous.
  view      Reshape/Flatten/Squeeze/Unsqueeze/Identity, and Slice/Split of one contiguous range, make their
            output a pointer into their input (graph inputs included: a read-only pointer into the caller's
            buffer); the step emits no code. A graph output is never a view: it must land in the caller's
            buffer, so that step still copies.
  in-place  an op whose code reads element i of an input before writing element i of its output (`in_place`)
            writes over an input of the same dtype and size when every tensor sharing that input's bytes is
            last read at this step, the bytes are in the arena, and no other input reads them elsewhere.
When the output already has a place (a Concat range) and the input has none yet, the input is put there
instead: its producer writes it into the Concat's range and the in-place op (or view) leaves it there.

The result is a forest: each tensor has at most one `Link` to the tensor whose bytes it uses; a root is an
arena buffer (spanning the lifetimes of everything linked under it), a graph input or a graph output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import cexpr, ops
from ..errors import MlccError
from ..ir import Graph, Value
from ..lower import Step
from ..ops.concat import channel_slices


@dataclass
class Link:
    parent: Value
    offset: int  # bytes into the parent
    kind: str  # "view", "concat" (written into its range of parent), "in-place" (written over parent),
    #             "placed" (written where parent will be: parent is computed over it, or is its view),
    #             "strided" (its rows written `pitch` bytes apart into parent, a channels-last Concat),
    #             "room" (in graph output parent's buffer, dead before it is written: output_room.py),
    #             "tail" (at the end of graph output parent's buffer, read as parent is written)
    pitch: int = 0  # bytes from one row to the next in parent ("strided"); 0: contiguous


def _view_at_every_size(x: Value, outputs: list[Value]) -> bool:
    """A view decided at the maximum holds at every run-time size only when each output is all of x's
    elements (a Reshape): a Slice or Split of a varying tensor is a different range at another size."""
    if x.extents is None and all(y.extents is None for y in outputs):
        return True
    whole = math.prod(x.extents if x.extents is not None else x.shape)
    return all(cexpr.same(math.prod(y.extents if y.extents is not None else y.shape), whole) for y in outputs if y.name)


class Sharing:
    def __init__(self, graph: Graph, steps: list[Step]):
        self.steps = steps
        self.links: dict[int, Link] = {}
        self.elided: set[int] = set()  # steps whose outputs are all views: no code
        self.external = {id(v) for v in graph.inputs} | {id(v) for v in graph.outputs}
        self.channel_slices = channel_slices(graph)
        self.writer: dict[int, int] = {}
        self.span: dict[int, list[int]] = {}  # id(root) -> [first, last] step over everything linked under it
        for index, step in enumerate(steps):
            for v in step.reads:
                self.span.setdefault(id(v), [index, index])[1] = index
            for v in step.writes:
                self.writer[id(v)] = index
                self.span.setdefault(id(v), [index, index])

    # --- the forest ---------------------------------------------------------------------------------
    def root(self, v: Value) -> tuple[Value, int]:
        offset = 0
        while id(v) in self.links:
            link = self.links[id(v)]
            offset += link.offset
            v = link.parent
        return v, offset

    def in_arena(self, v: Value) -> bool:
        return not v.is_const and id(self.root(v)[0]) not in self.external

    def _attach(self, child: Value, parent: Value, offset: int, kind: str, pitch: int = 0) -> None:
        assert id(child) not in self.links
        root = self.root(parent)[0]
        mine, theirs = self.span.pop(id(child)), self.span[id(root)]
        self.span[id(root)] = [min(mine[0], theirs[0]), max(mine[1], theirs[1])]
        self.links[id(child)] = Link(parent, offset, kind, pitch)

    def _free_root(self, v: Value) -> bool:
        """A root tensor some step writes into the arena: it may be placed inside another tensor."""
        return (not v.is_const and id(v) not in self.external and id(v) not in self.links and id(v) in self.writer
                and v.nbytes > 0)

    def _has_range_only(self, v: Value) -> bool:
        """v has a place that no other tensor uses before v is written: a Concat range (possibly nested)."""
        while id(v) in self.links:
            if self.links[id(v)].kind != "concat":
                return False
            v = self.links[id(v)].parent
        return True

    # --- decisions ----------------------------------------------------------------------------------
    def decide(self) -> "Sharing":
        for index, step in enumerate(self.steps):
            self._concat(index, step)
        for index, step in enumerate(self.steps):
            self._view(index, step)
        for index, step in enumerate(self.steps):
            self._in_place(index, step)
        return self

    def _concat(self, index: int, step: Step) -> None:
        op = ops.lookup(step.node.op_type, step.node.domain)
        out = step.node.outputs[0]
        if not op.gathers_inputs or out.nbytes == 0 or out.is_const:
            return
        if any(v is not None and v.extents is not None for v in [out, *step.node.inputs]):
            return  # the inputs' ranges in the output are placed at the maximum: they move at other sizes
        offsets, kind, pitch = op.input_offsets(step.node), "concat", 0
        parts = step.node.inputs
        if id(out) in self.channel_slices:
            itemsize = out.dtype.itemsize
            offsets, kind, pitch = [c * itemsize for c in self.channel_slices[id(out)]], "strided", out.shape[-1] * itemsize
        if offsets is None or len({id(v) for v in parts}) != len(parts):
            return
        if not all(self._free_root(v) or v.nbytes == 0 for v in parts):
            if kind == "strided":  # the producers' code already writes at the pitch
                raise MlccError(f"memory plan: the inputs of {step.node.name!r} cannot be written into it")
            return
        for v, offset in zip(parts, offsets):
            if v.nbytes:
                self._attach(v, out, offset, kind, pitch)
        self.elided.add(index)

    def _view(self, index: int, step: Step) -> None:
        op = ops.lookup(step.node.op_type, step.node.domain)
        x = step.node.inputs[0] if step.node.inputs else None
        if not op.view_of_input or x is None or x.is_const:
            return
        offsets = op.view_offsets(step.node)
        if offsets is None or not _view_at_every_size(x, step.node.outputs):
            return
        plan = []
        for y, offset in zip(step.node.outputs, offsets):
            if not y.name or y.nbytes == 0:
                continue
            if id(y) in self.external or y.dtype != x.dtype:
                return
            if id(y) not in self.links:
                plan.append((y, x, offset, "view"))
            elif (len(step.node.outputs) == 1 and offset == 0 and x.nbytes == y.nbytes and self._free_root(x)
                  and self._has_range_only(y) and self.root(y)[0] is not x):
                plan.append((x, y, 0, "placed"))  # y already has a Concat range: x is produced there
            else:
                return
        for child, parent, offset, kind in plan:
            self._attach(child, parent, offset, kind)
        self.elided.add(index)

    def _in_place(self, index: int, step: Step) -> None:
        op = ops.lookup(step.node.op_type, step.node.domain)
        candidates = op.in_place_inputs(step.node)
        z = step.node.outputs[0] if len(step.node.outputs) == 1 else None
        if not candidates or z is None or z.nbytes == 0 or id(z) in self.external:
            return
        for i in candidates:
            x = step.node.inputs[i]
            if x.is_const or not self.in_arena(x):
                continue
            root, offset = self.root(x)
            if self.span[id(root)][1] != index or not self._others_leave(step, i, root, offset, op.elementwise):
                continue  # the bytes are read later, or another operand reads them at other indices
            if id(z) not in self.links:
                self._attach(z, x, 0, "in-place")
                return
            if x is root and self._free_root(x) and self._has_range_only(z) and self.root(z)[0] is not x:
                self._attach(x, z, 0, "placed")  # z has a Concat range: x is produced there, z over it
                return

    def _others_leave(self, step: Step, i: int, root: Value, offset: int, elementwise: bool) -> bool:
        """No other operand of the step reads the bytes of `root` except exactly operand i's range, and
        that only for an elementwise op (a convolution reads its input at other indices)."""
        x = step.node.inputs[i]
        for j, w in enumerate(step.node.inputs):
            if j == i or w is None or w.is_const:
                continue
            w_root, w_offset = self.root(w)
            overlaps = w_root is root and w_offset < offset + x.nbytes and offset < w_offset + w.nbytes
            if overlaps and not (elementwise and w_offset == offset and w.nbytes == x.nbytes and w.size == x.size):
                return False
        return True
