"""The epilogue a node carries after passes/fuse_epilogues (attrs `activation`, `activation_params`, and a
residual input at the op's `epilogue_input`), as the kernels' Epilogue description."""

from __future__ import annotations

from ..ir import Node
from ._gemm import Epilogue


def node_epilogue(node: Node, residual_index: int, rs: int, cs: int, batch_stride: int = 0) -> Epilogue | None:
    """None when nothing was fused; rs, cs, batch_stride: how the residual is read (the output's layout)."""
    residual = node.input(residual_index)
    if "activation" not in node.attrs and residual is None:
        return None
    a, b = node.attrs.get("activation_params", [0.0, 0.0])
    return Epilogue(node.attrs.get("activation", "none"), float(a), float(b), residual,
                    rs if residual is not None else 0, cs if residual is not None else 0,
                    batch_stride if residual is not None else 0)
