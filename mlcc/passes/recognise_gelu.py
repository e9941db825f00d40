"""Recognise GELU written out in elementary ops and make it one Gelu node.

    erf form:   x * 0.5 * (1 + Erf(x / sqrt(2)))                              -> Gelu(approximate="none")
    tanh form:  0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))     -> Gelu(approximate="tanh")

The argument of Erf/Tanh and the expression around it are expanded into polynomials (see _patterns), so
every association order and spelling exporters write (x / 1.4142 or x * 0.7071, Pow(x, 3) or x * x * x,
the 0.5 on x, on the sum or on the product) is the same match. Constants are checked by value to a relative
1e-4. The group is replaced only when nothing outside it reads its intermediates.
"""

from __future__ import annotations

from math import pi, sqrt

from .. import ops
from ..ir import Graph, Node, Value
from ..ops import Role
from ._patterns import ELEMENTWISE_ALGEBRA, Expander, forward_candidates, matches
from ._rewrite import Rewriter

GELU_SINCE = 20
SQRT_2_OVER_PI = sqrt(2.0 / pi)
# the argument of the special function, over x
ARGUMENTS = {
    Role.ERF: ("none", {(1,): 1.0 / sqrt(2.0)}),
    Role.TANH: ("tanh", {(1,): SQRT_2_OVER_PI, (3,): SQRT_2_OVER_PI * 0.044715}),
}
OUTER = {(1, 0): 0.5, (1, 1): 0.5}  # 0.5 x + 0.5 x f over (x, f)


def run(graph: Graph) -> dict:
    m = Rewriter(graph)
    found = {"none": 0, "tanh": 0}
    for special in [n for n in graph.nodes if ops.has_role(n, *ARGUMENTS)]:
        approximate = _rewrite(m, special)
        if approximate:
            found[approximate] += 1
    return {"gelu_erf": found["none"], "gelu_tanh": found["tanh"]}


def _argument_nodes(m: Rewriter, value: Value, limit: int = 12) -> list[Value]:
    """Values the argument is computed from through elementwise algebra, deepest first: candidates for x."""
    seen, order, stack = set(), [], [value]
    while stack and len(order) < limit:
        v = stack.pop()
        if id(v) in seen or v.is_const:
            continue
        seen.add(id(v))
        order.append(v)
        node = m.producer(v, *ELEMENTWISE_ALGEBRA)
        if node is not None:
            stack.extend(node.inputs)
    return order[::-1]


def _rewrite(m: Rewriter, special: Node) -> str | None:
    approximate, argument = ARGUMENTS[ops.of(special).role]
    f = special.outputs[0]
    if f.dtype.kind != "f":
        return None
    for x in _argument_nodes(m, special.inputs[0]):
        inner = Expander(m, {id(x): 0}, 1)
        p = inner.expand(special.inputs[0])
        if p is None or not matches(p, argument):
            continue
        for last in forward_candidates(m, f, 5):
            y = last.outputs[0]
            if y.shape != x.shape or y.dtype != x.dtype:
                continue
            outer = Expander(m, {id(x): 0, id(f): 1}, 2)
            q = outer.expand(y)
            if q is None or not matches(q, OUTER):
                continue
            group = list({id(n): n for n in [*inner.nodes, special, *outer.nodes]}.values())
            if not m.closed(group, y):
                continue
            gelu = Node(ops.for_role(Role.GELU).op_type, last.name, [x], [y], {"approximate": approximate}, "",
                        max(special.opset, GELU_SINCE))
            m.swap(group, gelu)
            return approximate
        return None
    return None
