"""Channels-last operands (passes/choose_layout): a node with attr `layout="NHWC"` reads and writes
N[D][H]WC tensors. Its geometry is still computed by the NCHW code, on a view of the node whose data
input has the channels-first shape."""

from __future__ import annotations

import numpy as np

from ..ir import Node, Value

NHWC = "NHWC"
# Set by passes/fold_layout_transposes on a channels-last node that reads its data input where the model
# stores it, channels-first (its output stays channels-last): its geometry is the node's own.
CHANNELS_FIRST_INPUT = "channels_first_input"


def is_channels_last(node: Node) -> bool:
    return node.attrs.get("layout") == NHWC


def to_channels_first(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (shape[0], shape[-1], *shape[1:-1])


def to_channels_last(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (shape[0], *shape[2:], shape[1])


def reads_channels_first(node: Node) -> bool:
    return bool(node.attrs.get(CHANNELS_FIRST_INPUT))


def channels_first_view(node: Node) -> Node:
    """The node as if its data input were NC[D][H]W (for the geometry helpers; never lowered)."""
    if reads_channels_first(node):
        return node
    x = node.inputs[0]
    view = Value(x.name, x.dtype, to_channels_first(x.shape), x.data)
    return Node(node.op_type, node.name, [view, *node.inputs[1:]], node.outputs, node.attrs, node.domain, node.opset)


def permuted_constant(data: np.ndarray, keep_rank: bool) -> np.ndarray:
    """A constant broadcast against N, C, H, W, as one broadcast against N, H, W, C (leading 1s dropped
    unless keep_rank: a Concat's operands keep theirs)."""
    full = data.reshape((1,) * (4 - data.ndim) + data.shape).transpose(0, 2, 3, 1)
    shape = list(full.shape)
    while not keep_rank and len(shape) > 1 and shape[0] == 1:
        shape.pop(0)
    return np.ascontiguousarray(full.reshape(shape))


def float_activations(op, node: Node) -> bool:
    """Are the node's outputs and activation inputs (op.activation_inputs) all float32?"""
    return all(v.dtype == np.float32 for v in [*node.outputs, *(node.inputs[i] for i in op.activation_inputs(node))])


class LayoutAttribute:
    """The channels-last capabilities (mlcc.ops.Op) of an op reading one 4-D float32 activation in the
    layout its attribute `layout` names (pools, LRN); a mixin listed before Op. Pools seed regions."""
    channels_last_seed = True

    def activation_inputs(self, node: Node) -> list[int]:
        return [0]

    def runs_channels_last(self, node: Node) -> bool:
        x = node.inputs[0]
        return float_activations(self, node) and len(node.outputs) == 1 and len(x.shape) == 4 and not x.is_const

    def to_channels_last(self, node: Node) -> None:
        node.attrs["layout"] = NHWC
