"""Attribute helpers shared by the sliding-window ops (Conv, ConvTranspose, pooling)."""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node


def spatial_ints(node: Node, name: str, count: int, default: int) -> list[int]:
    """An ints attribute with one entry per spatial dim (or 2x for pads); absent or empty gives the default."""
    value = node.attrs.get(name)
    if value is None or len(value) == 0:
        return [default] * count
    if len(value) != count:
        raise UnsupportedError(f"{name} has {len(value)} entries for {count} spatial dims", node.where())
    return [int(v) for v in value]
