"""Channels-last operands (passes/choose_layout): a node with attr `layout="NHWC"` reads and writes
N[D][H]WC tensors. Its geometry is still computed by the NCHW code, on a view of the node whose data
input has the channels-first shape."""

from __future__ import annotations

from ..ir import Node, Value

NHWC = "NHWC"


def is_channels_last(node: Node) -> bool:
    return node.attrs.get("layout") == NHWC


def to_channels_first(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (shape[0], shape[-1], *shape[1:-1])


def to_channels_last(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (shape[0], *shape[2:], shape[1])


def channels_first_view(node: Node) -> Node:
    """The node as if its data input were NC[D][H]W (for the geometry helpers; never lowered)."""
    x = node.inputs[0]
    view = Value(x.name, x.dtype, to_channels_first(x.shape), x.data)
    return Node(node.op_type, node.name, [view, *node.inputs[1:]], node.outputs, node.attrs, node.domain, node.opset)
