"""FusedElementwise (domain mlcc): a connected group of elementwise ops computed in one loop.

Made by passes/fuse_elementwise. Its inputs are the group's operands from outside, its one output the
group's result; attribute `body` holds the member nodes in order, each still reading and writing its own
values. Lowering chains the members' C expressions (elementwise.py rows) as locals of one loop nest, so no
intermediate tensor is written.
"""

from __future__ import annotations

from ..errors import UnsupportedError
from ..ir import Node
from . import Op, lookup, register
from ._broadcast import loop_nest


def members(node: Node) -> list[Node]:
    return node.attrs["body"]


@register
class FusedElementwise(Op):
    op_type = "FusedElementwise"
    domain = "mlcc"
    attrs = {"body": None}
    elementwise = True
    variable_extents = True  # one loop nest over the output (ops/_broadcast.py takes run-time extents)
    in_place = True  # elementwise.c.j2 loads every operand at an index before storing there

    def reference(self, node: Node, inputs):
        values = {id(v): x for v, x in zip(node.inputs, inputs)}
        for member in members(node):
            op = lookup(member.op_type, member.domain)
            outs = op.reference(member, [None if v is None else values[id(v)] if id(v) in values else v.data
                                         for v in member.inputs])
            values.update({id(v): x for v, x in zip(member.outputs, outs)})
        return [values[id(node.outputs[0])]]

    def lower(self, node: Node, ctx) -> None:
        out = node.outputs[0]
        nest = loop_nest(out.shape, [v.shape for v in node.inputs])
        local = {id(v): f"x{i}" for i, v in enumerate(node.inputs)}
        temps, read_locals, inline_math = [], set(), False
        for j, member in enumerate(members(node)):
            op = lookup(member.op_type, member.domain)
            if not op.fusable(member):
                raise UnsupportedError("a fused elementwise member does not fit its loop", member.where())
            operands = [v for v in member.inputs if v is not None]
            names = [local[id(v)] for v in operands]
            body = op.body(member, names, temp_prefix=f"m{j}_")  # members' temps stay apart
            read_locals.update(names[k] for k in body.reads)
            inline_math |= body.inline_math
            temps += [(ctx.c_type(operands[0]), name, expr) for name, expr in body.temps]
            temps.append((ctx.c_type(member.outputs[0]), f"v{j}", body.expr))
            local[id(member.outputs[0])] = f"v{j}"
        *temps, (_, _, expr) = temps
        if inline_math:
            ctx.use_kernels("f32-vmath")
        read = [f"x{i}" in read_locals for i in range(len(node.inputs))]
        loads = [(ctx.c_type(v), f"x{i}", f"{ctx.ptr(v)}[{nest.operand_index[i]}]")
                 for i, v in enumerate(node.inputs) if read[i]]
        ctx.emit("ops/elementwise.c.j2", nest=nest, loads=loads, temps=temps, expr=expr,
                 out=f"{ctx.ptr(out)}[{nest.out_index}]",
                 unread=[ctx.ptr(v) for i, v in enumerate(node.inputs) if not read[i]])

    def flops(self, node: Node) -> int:
        return sum(lookup(m.op_type, m.domain).flops(m) for m in members(node))
