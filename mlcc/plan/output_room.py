"""The caller's output buffers as room for intermediates: a step of planning after sharing, before offsets.

A graph output's buffer holds nothing the caller may look at until the run returns, and nothing of the model's
until the first step that writes into it. An arena buffer (a sharing tree's root) whose life ends before that
step lives there instead, at a 64-byte offset where nothing else placed there is live at the same time. So does
one that the writing step itself reads last, when the op reads element i of it before writing element i of the
output in increasing i into an element at least as wide (`Op.tail_inputs`: a DequantizeLinear of the result to
float): placed at the very end of the output's bytes, element i's write never reaches an element not yet read.
An int8 model's quantized input and its last quantized result so leave the arena, and so do an autoencoder's
early activations in float.

This asks one thing of the caller, said in the README and NAME.h: inputs and outputs do not overlap. A tensor
goes only into an output whose elements are at least as wide as its own (the caller aligns a buffer for its own
elements), and outputs whose size varies at run time are left alone (the plan is made at the maxima).
"""

from __future__ import annotations

from .. import ops
from ..ir import Graph, Value
from ..lower import Step
from .sharing import Sharing

ALIGN = 64  # offsets in an output, as in the arena
TAIL_ALIGN = 16  # a tensor at an output's end: its offset is fixed, so it is used only where it is this aligned


def place(graph: Graph, steps: list[Step], sharing: Sharing, buffers: list) -> dict[int, tuple[Value, int, str]]:
    """The buffers moved into graph outputs: id(root value) -> (graph output, byte offset, link kind
    "room" or "tail"). `buffers` are the arena's (Buffer: value, first, last, size)."""
    inputs = {id(v) for v in graph.inputs}
    outputs = {id(v): v for v in graph.outputs
               if id(v) not in inputs and v.nbytes and v.extents is None and not v.is_const}
    first_write: dict[int, int] = {}
    for index, step in enumerate(steps):
        for v in step.writes:
            root = sharing.root(v)[0]
            if id(root) in outputs:
                first_write.setdefault(id(root), index)
    rooms = sorted((o for o in outputs.values() if id(o) in first_write), key=lambda o: (-o.nbytes, o.name))
    if not rooms:
        return {}
    placed: dict[int, list[tuple[int, int, int, int]]] = {id(o): [] for o in rooms}  # (offset, end, first, last)
    moved: dict[int, tuple[Value, int, str]] = {}
    movable = [b for b in buffers if id(b.value) in sharing.span and b.size and b.value.extents is None]
    for b in sorted(movable, key=lambda b: (-b.size, b.first, b.value.name)):
        for out in rooms:
            start = first_write[id(out)]
            if b.value.dtype.itemsize > out.dtype.itemsize:
                continue  # the caller aligns its buffer for its own elements only
            if b.last < start:
                offset = _first_fit(placed[id(out)], b, out.nbytes)
                kind = "room"
            elif b.last == start:
                offset = _tail(steps[start], out, b, sharing, placed[id(out)])
                kind = "tail"
            else:
                continue
            if offset is not None:
                placed[id(out)].append((offset, offset + b.value.nbytes, b.first, b.last))
                moved[id(b.value)] = (out, offset, kind)
                break
    return moved


def _fits(taken: list[tuple[int, int, int, int]], b, offset: int) -> bool:
    return all(not (lo < offset + b.value.nbytes and offset < hi and first <= b.last and b.first <= last)
               for lo, hi, first, last in taken)


def _first_fit(taken: list[tuple[int, int, int, int]], b, room: int) -> int | None:
    for offset in [0, *sorted(-(-hi // ALIGN) * ALIGN for _, hi, _, _ in taken)]:
        if offset + b.value.nbytes <= room and _fits(taken, b, offset):
            return offset
    return None


def _tail(step: Step, out: Value, b, sharing: Sharing, taken: list) -> int | None:
    """The offset of b at the end of `out`, when the step writing `out` reads b so that it may sit there."""
    node = step.node
    if len(node.outputs) != 1 or node.outputs[0] is not out:
        return None
    op = ops.lookup(node.op_type, node.domain)
    tails = [node.inputs[i] for i in (op.tail_inputs(node) if op is not None else [])]
    if not any(sharing.root(x) == (b.value, 0) and x.nbytes == b.value.nbytes for x in tails):
        return None
    readers = [x for x in node.inputs if x is not None and not x.is_const and sharing.root(x)[0] is b.value]
    if len(readers) != 1:
        return None  # another operand reads the same bytes at other indices
    offset = out.nbytes - b.value.nbytes
    if offset < 0 or offset % TAIL_ALIGN or not _fits(taken, b, offset):
        return None
    return offset
