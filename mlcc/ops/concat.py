"""Concat: each input is copied into its slab of the output along `axis`. Where the slabs are contiguous the
memory planner has the producers write straight into them instead, and this copy is not emitted. Along the
last axis (the channels of a channels-last tensor) the slabs are strided: when every input's producer can
write its rows at the output's row pitch (Op.writes_row_pitch), they do, and again nothing is copied."""

from __future__ import annotations

from ..ir import Graph, Node, Value
from . import REQUIRED, Op, lookup, register
from ._copy import Region, emit_regions, normalize_axis, slabs
from ._layout import permuted_constant


def channel_slices(graph: Graph) -> dict[int, list[int]]:
    """id(output) of each Concat along the last axis whose inputs are all written at its row pitch -> each
    input's offset in elements into a row of the output. Such an input is a tensor of the arena (no graph
    input or output), written by a row_pitch_output node whose single output it is, and read by this Concat
    alone, once: so nothing else ever reads or writes it through its own contiguous layout."""
    producers = {id(v): n for n in graph.nodes for v in n.outputs}
    consumers = graph.consumers()
    external = {id(v) for v in [*graph.inputs, *graph.outputs]}
    found = {}
    for node in graph.nodes:
        op = lookup(node.op_type, node.domain)
        out = node.outputs[0] if node.outputs else None
        if not (op and op.gathers_inputs) or out is None or out.is_const or out.nbytes == 0 or len(out.shape) < 2:
            continue
        parts = node.inputs
        if (op.input_offsets(node) is not None or normalize_axis(node.attrs["axis"], len(out.shape), node) != len(out.shape) - 1
                or any(v is None for v in parts) or len({id(v) for v in parts}) != len(parts)):
            continue

        def writes_rows(v: Value) -> bool:
            producer = producers.get(id(v))
            producer_op = producer and lookup(producer.op_type, producer.domain)
            return (not v.is_const and v.nbytes > 0 and id(v) not in external and producer_op is not None
                    and len(producer.outputs) == 1 and producer_op.writes_row_pitch(producer)
                    and [n is node for n in consumers.get(id(v), [])] == [True])

        if all(writes_rows(v) for v in parts):
            offsets, at = [], 0
            for v in parts:
                offsets.append(at)
                at += v.shape[-1]
            found[id(out)] = offsets
    return found


def output_row_pitch(graph: Graph, value: Value) -> int | None:
    """The row pitch in elements at which `value` is to be written (it is a channel slice of a Concat's
    output, see channel_slices), or None when it is a tensor of its own."""
    consumers = graph.consumers().get(id(value), [])
    if len(consumers) != 1 or id(consumers[0].outputs[0]) not in channel_slices(graph):
        return None
    return consumers[0].outputs[0].shape[-1]


@register
class Concat(Op):
    op_type = "Concat"
    variable_extents = True  # slabs of run-time extents, copied (the planner writes no input in place then)
    attrs = {"axis": REQUIRED}
    gathers_inputs = True
    quantized_form = "copies"  # on 8-bit inputs, each requantized to the output's scale where it differs

    def runs_channels_last(self, node: Node) -> bool:
        """Along the channels of 4-D tensors: channels-last, along axis 3."""
        return int(node.attrs.get("axis", 0)) in (1, -3) and all(len(v.shape) == 4 for v in node.inputs)

    def to_channels_last(self, node: Node) -> None:
        node.attrs["axis"] = 3

    def channels_last_constant(self, node: Node, data):
        return permuted_constant(data, keep_rank=True)  # concatenated, not broadcast

    def input_offsets(self, node: Node) -> list[int] | None:
        """Each input is a contiguous range of the output when every axis before `axis` has size 1."""
        out = node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(out.shape), node)
        parts = [v for v in node.inputs if v is not None]
        pieces = slabs(out.shape, axis, [v.shape[axis] for v in parts])
        if len(parts) != len(node.inputs) or any(outer != 1 for outer, _, _, _ in pieces):
            return None
        return [offset * out.dtype.itemsize for _, _, _, offset in pieces]

    def lower(self, node: Node, ctx) -> None:
        out = node.outputs[0]
        axis = normalize_axis(node.attrs["axis"], len(out.shape), node)
        parts = [v for v in node.inputs if v is not None]
        pieces = slabs(out.shape, axis, [v.shape[axis] for v in parts])
        for i, (v, (outer, row, out_row, offset)) in enumerate(zip(parts, pieces)):
            region = Region([outer, row], [out_row, 1], [row, 1], dst_offset=offset)
            emit_regions(ctx, out, v, [(region, f"input {i}")])
