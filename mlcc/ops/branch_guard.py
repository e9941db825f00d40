"""BranchGuard (domain mlcc): output = input, after checking at run time that an If's condition chose the
branch mlcc compiled. mlcc.control_flow puts one on each output of an If whose other branch cannot be typed
with the built shapes; when the condition chooses that branch, NAME_run returns MLCC_ERROR_UNCOMPILED_BRANCH."""

from __future__ import annotations

import numpy as np

from ..ir import Node
from . import Op, register
from ._copy import emit_memcpy


@register
class BranchGuard(Op):
    op_type = "BranchGuard"
    domain = "mlcc"
    # taken: 1 when then_branch was compiled, 0 for else_branch; if_node: the If's "node 'NAME' (If)"; reason: why
    # the other branch was left out
    attrs = {"taken": 1, "if_node": "", "reason": ""}
    float16_native = True  # moves bits only

    def infer(self, node: Node):
        data = node.inputs[1]
        return [(data.dtype, data.shape)]

    def reference(self, node: Node, inputs: list[np.ndarray | None]) -> list[np.ndarray]:
        cond, data = inputs
        if bool(np.asarray(cond).reshape(-1)[0]) != bool(node.attrs["taken"]):
            raise ValueError(f"the condition chooses the branch of {node.attrs['if_node']} that cannot be compiled")
        return [data]

    def lower(self, node: Node, ctx) -> None:
        branch = "then_branch" if node.attrs["taken"] else "else_branch"
        ctx.emit("ops/branch_guard.c.j2", cond=ctx.ptr(node.inputs[0]), taken=bool(node.attrs["taken"]),
                 note=f"only {branch} of {node.attrs['if_node']} is compiled")
        emit_memcpy(ctx, node.outputs[0], node.inputs[1])
