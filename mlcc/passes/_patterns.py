"""What the recognise_* passes share besides the toolkit (_rewrite.Rewriter): constants read as scalars,
reduction axes, and a small symbolic algebra that turns an elementwise subgraph into a polynomial.

The polynomial form is what makes the recognisers indifferent to how an exporter associated and ordered a
formula: x * 0.5 * (1 + erf(x / sqrt 2)), (x * (erf(x * 0.7071) + 1)) * 0.5 and 0.5 * x + 0.5 * x * erf(...)
all expand to the same {x: 0.5, x*E: 0.5}. Coefficients are float64 arrays (a LayerNorm's gamma and beta are
coefficients too), compared with a relative tolerance.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..ir import Node, Value
from ..ops import Role
from ._rewrite import Rewriter

ELEMENTWISE_ALGEBRA = (Role.ADD, Role.SUB, Role.MUL, Role.DIV, Role.NEG, Role.POW, Role.RECIPROCAL)


def scalar(value: Value | None) -> float | None:
    """The value of a constant whose elements are all equal (a broadcast scalar), else None."""
    if value is None or not value.is_const or value.size == 0 or value.dtype.kind not in "fiu":
        return None
    flat = value.data.reshape(-1)
    return float(flat[0]) if np.all(flat == flat[0]) else None


def reduce_axes(node: Node, rank: int) -> tuple[int, ...] | None:
    """The sorted axes a Reduce* node reduces (from its attribute or, in newer opsets, its input); None
    when they are not constants or the node reduces nothing."""
    given = node.input(1)
    if given is not None:
        if not given.is_const:
            return None
        axes = [int(a) for a in given.data.reshape(-1)]
    else:
        axes = node.attrs.get("axes")
        axes = None if axes is None else [int(a) for a in axes]
    if not axes:
        if node.attrs.get("noop_with_empty_axes", 0):
            return None
        return tuple(range(rank))
    if any(not -rank <= a < rank for a in axes):
        return None
    return tuple(sorted({a % rank for a in axes}))


def keeps_dims(node: Node) -> bool:
    return bool(node.attrs.get("keepdims", 1))


# --- polynomials ----------------------------------------------------------------------------------
Monomial = tuple[int, ...]  # the power of each variable
Poly = dict[Monomial, np.ndarray]


def poly_add(p: Poly, q: Poly, sign: float = 1.0) -> Poly:
    out = dict(p)
    for mono, c in q.items():
        out[mono] = out[mono] + sign * c if mono in out else sign * c
    return out


def poly_mul(p: Poly, q: Poly) -> Poly:
    out: Poly = {}
    for m1, c1 in p.items():
        for m2, c2 in q.items():
            mono = tuple(a + b for a, b in zip(m1, m2))
            out[mono] = out[mono] + c1 * c2 if mono in out else c1 * c2
    return out


def poly_scale(p: Poly, factor) -> Poly:
    return {mono: c * factor for mono, c in p.items()}


def constant_part(p: Poly, variables: int) -> np.ndarray | None:
    """The coefficient of a polynomial that is a constant only, else None."""
    zero = (0,) * variables
    return p[zero] if set(p) <= {zero} and zero in p else None


def trimmed(p: Poly) -> Poly:
    return {mono: c for mono, c in p.items() if np.any(np.abs(c) > 1e-12)}


def matches(p: Poly, target: dict[Monomial, float], rtol: float = 1e-4) -> bool:
    """p equals `target`, whose coefficients are scalars, up to a relative tolerance (each coefficient of
    p constant across its array)."""
    p = trimmed(p)
    if set(p) != set(target):
        return False
    for mono, want in target.items():
        c = np.asarray(p[mono])
        if not np.all(np.abs(c - want) <= rtol * abs(want)):
            return False
    return True


class Expander:
    """Expands a value into a polynomial of the `leaves` through Add, Sub, Mul, Neg, Pow by a small
    integer, and Div or Reciprocal of constants; `inverse_leaves` are values whose reciprocal is a
    variable (a standard deviation dividing). Records every node it expanded through in `nodes`."""

    MAX_NODES = 40

    def __init__(self, m: Rewriter, leaves: dict[int, int], variables: int, inverse_leaves: dict[int, int] | None = None):
        self.m = m
        self.leaves = leaves
        self.inverse_leaves = inverse_leaves or {}
        self.variables = variables
        self.nodes: list[Node] = []
        self._memo: dict[int, Poly | None] = {}

    def _variable(self, index: int) -> Poly:
        return {tuple(int(i == index) for i in range(self.variables)): np.float64(1.0)}

    def _constant(self, data) -> Poly:
        return {(0,) * self.variables: np.asarray(data, dtype=np.float64)}

    def expand(self, value: Value) -> Poly | None:
        if id(value) not in self._memo:
            self._memo[id(value)] = self._expand(value)
        return self._memo[id(value)]

    def _expand(self, value: Value) -> Poly | None:
        if id(value) in self.leaves:
            return self._variable(self.leaves[id(value)])
        if value.is_const:
            return self._constant(value.data) if value.dtype.kind == "f" else None
        node = self.m.producer(value, *ELEMENTWISE_ALGEBRA)
        if node is None or len(self.nodes) >= self.MAX_NODES:
            return None
        if node not in self.nodes:
            self.nodes.append(node)
        role, ins = ops.of(node).role, node.inputs
        if role is Role.NEG:
            p = self.expand(ins[0])
            return None if p is None else poly_scale(p, -1.0)
        if role is Role.RECIPROCAL:
            return self._inverse(ins[0])
        if role is Role.POW:
            exponent = scalar(ins[1])
            p = self.expand(ins[0])
            if p is None or exponent is None or exponent != int(exponent) or not 1 <= exponent <= 4:
                return None
            out = p
            for _ in range(int(exponent) - 1):
                out = poly_mul(out, p)
            return out
        p = self.expand(ins[0])
        if p is None:
            return None
        if role is Role.DIV:
            q = self._inverse(ins[1])
            return None if q is None else poly_mul(p, q)
        q = self.expand(ins[1])
        if q is None:
            return None
        if role is Role.MUL:
            return poly_mul(p, q)
        return poly_add(p, q, 1.0 if role is Role.ADD else -1.0)

    def _inverse(self, value: Value) -> Poly | None:
        if id(value) in self.inverse_leaves:
            return self._variable(self.inverse_leaves[id(value)])
        p = self.expand(value)
        c = None if p is None else constant_part(p, self.variables)
        if c is None or np.any(c == 0):
            return None
        return self._constant(1.0 / c)


def forward_candidates(m: Rewriter, start: Value, depth: int, roles=ELEMENTWISE_ALGEBRA) -> list[Node]:
    """Nodes of `roles` reachable from `start` through such nodes within `depth` steps, latest first."""
    found: dict[int, Node] = {}
    frontier = [start]
    for _ in range(depth):
        following = []
        for v in frontier:
            for reader in m.readers_of(v):
                if ops.has_role(reader, *roles) and id(reader) not in found:
                    found[id(reader)] = reader
                    following.extend(reader.outputs)
        frontier = following
    return sorted(found.values(), key=lambda n: -m.order[id(n)])

