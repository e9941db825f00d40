"""Optional outputs an op does not implement: fine while nothing reads them, an error otherwise."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node


def output_used(ctx, value) -> bool:
    """Does anything read this output (a later node or the graph's outputs)? Empty names are omitted ones."""
    if value is None or not value.name:
        return False
    if any(value is v for v in ctx.graph.outputs):
        return True
    return any(value is v for n in ctx.graph.nodes for v in n.inputs)


def drop_unread_outputs(node: Node, ctx, first: int, what: str) -> None:
    """Only the outputs before index `first` are implemented: raise if a later one is read, else drop them
    from the node so that no buffer is planned (and left unwritten) for them."""
    for value in node.outputs[first:]:
        if output_used(ctx, value):
            raise UnsupportedError(f"{what} (output {value.name!r}) is not supported", node.where())
    del node.outputs[first:]
