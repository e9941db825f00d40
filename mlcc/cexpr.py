"""C index arithmetic built from integers, folded as a careful hand would write it.

One convention for size_t arithmetic: every integer literal in it carries `u` (`784u`), so element counts,
strides and trip counts never mix signed and unsigned operands. `offset` drops terms whose index or stride
is 0 and writes `* 1` as nothing; `index(name, trips)` is the loop variable, or 0 for a loop that runs once;
the template filter `loop` turns a braced block into `for (size_t name = 0; name < trips; ++name) { ... }`,
or into its statements alone (one level out) when trips is 1, its index terms then already gone through `index`.
"""

from __future__ import annotations

import itertools
import math

from .cnames import float_literal
from .errors import ShapeError


class VariableExtentError(ShapeError):
    """A build-time decision asked about a dimension that varies at run time (a comparison the dimension's
    range does not settle, or a conversion to a plain integer): the op cannot take that extent yet."""


EXHAUSTIVE_BOUNDS = 1 << 12  # sizes a bound with a floor division is evaluated at, one by one, at most


class _Quotient:
    """floor(numerator / divisor) of a run-time size that is never negative: an atom of a Sym's monomials,
    written `((d_w + 1u) / 2u)` in C (size_t division floors)."""

    __slots__ = ("numerator", "divisor")

    def __init__(self, numerator: "Sym", divisor: int):
        self.numerator, self.divisor = numerator, divisor

    def key(self) -> str:
        return f"({self.numerator.text()})//{self.divisor}"

    def __eq__(self, other):
        return isinstance(other, _Quotient) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())


def _atom_key(atom) -> str:
    return atom if isinstance(atom, str) else atom.key()


def _atom_at(atom, sizes: dict[str, int]) -> int:
    return sizes[atom] if isinstance(atom, str) else atom.numerator.at(sizes) // atom.divisor


def _atom_c(atom) -> str:
    return dim_name(atom) if isinstance(atom, str) else f"(({atom.numerator.c()}) / {literal(atom.divisor)})"


def _atom_symbols(atom) -> set[str]:
    return {atom} if isinstance(atom, str) else set(atom.numerator.symbols)


def _ordered(terms: dict) -> list:
    return sorted(terms.items(), key=lambda t: (-len(t[0]), tuple(_atom_key(a) for a in t[0])))


class Sym:
    """A whole number known at run time: a polynomial in the model's variable dimensions (each a C variable
    of type size_t within a range), with integer coefficients. Arithmetic with ints and other Syms stays
    symbolic; a comparison is answered when the ranges settle it for every size, else VariableExtentError;
    int(), indexing and str() refuse (a literal must never stand for it silently). `c()` is its C text."""

    __slots__ = ("terms", "ranges")

    def __init__(self, terms: dict[tuple[str, ...], int], ranges: dict[str, tuple[int, int]]):
        self.terms = {m: c for m, c in terms.items() if c}
        self.ranges = ranges

    @classmethod
    def symbol(cls, name: str, low: int, high: int) -> "Sym":
        return cls({(name,): 1}, {name: (low, high)})

    @staticmethod
    def of(value) -> "int | Sym":
        """A Sym that is a plain number becomes that int (so static arithmetic stays static)."""
        if isinstance(value, Sym) and set(value.terms) <= {()}:
            return value.terms.get((), 0)
        return value

    # --- arithmetic ---------------------------------------------------------------------------------------
    @staticmethod
    def _lift(value) -> "Sym":
        if isinstance(value, Sym):
            return value
        if isinstance(value, bool) or not isinstance(value, int) and not hasattr(value, "__index__"):
            return NotImplemented
        return Sym({(): int(value)}, {})

    def __add__(self, other):
        other = self._lift(other)
        if other is NotImplemented:
            return other
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms.get(m, 0) + c
        return Sym.of(Sym(terms, {**self.ranges, **other.ranges}))

    __radd__ = __add__

    def __neg__(self):
        return Sym({m: -c for m, c in self.terms.items()}, self.ranges)

    def __sub__(self, other):
        other = self._lift(other)
        return other if other is NotImplemented else self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        other = self._lift(other)
        if other is NotImplemented:
            return other
        terms: dict[tuple[str, ...], int] = {}
        for (m1, c1), (m2, c2) in itertools.product(self.terms.items(), other.terms.items()):
            m = tuple(sorted(m1 + m2, key=_atom_key))
            terms[m] = terms.get(m, 0) + c1 * c2
        return Sym.of(Sym(terms, {**self.ranges, **other.ranges}))

    __rmul__ = __mul__

    def __floordiv__(self, other):
        """`64 * S // 64` is S; an inexact division by a positive number of a size never negative is a
        quotient atom (a strided convolution's output size)."""
        if isinstance(other, int) and other and all(c % other == 0 for c in self.terms.values()):
            return Sym.of(Sym({m: c // other for m, c in self.terms.items()}, self.ranges))
        if isinstance(other, int) and not isinstance(other, bool) and other > 0 and self.bounds()[0] >= 0:
            return Sym({(_Quotient(self, other),): 1}, self.ranges)
        if isinstance(other, int) and not isinstance(other, bool) and other > 0 and self.bounds()[1] <= 0:
            return -((-self + (other - 1)) // other)  # floor(-x / d) = -ceil(x / d): `-(-x // d)` rounds up
        raise VariableExtentError(f"{self.c()} divided by {other} is not a floor division of a size")

    def __mod__(self, other):
        if isinstance(other, int) and other and all(c % other == 0 for c in self.terms.values()):
            return 0
        return self - other * (self // other)

    # --- what the ranges settle ---------------------------------------------------------------------------
    def at(self, sizes: dict[str, int]) -> int:
        return sum(c * math.prod(_atom_at(a, sizes) for a in m) for m, c in self.terms.items())

    def bounds(self) -> tuple[int, int]:
        """Least and greatest value over the ranges: at their corners for a multilinear polynomial (affine in
        each size); with a quotient (a floor division, which a linear term can offset, as 2 * ((S-1)//2) - S
        does) at every size when the ranges hold few, else each term's own interval (wider, never narrower)."""
        names = sorted(self.ranges)
        floors = any(isinstance(a, _Quotient) for m in self.terms for a in m)
        every = itertools.product(*(range(lo, hi + 1) for lo, hi in (self.ranges[n] for n in names)))
        if not floors:
            every = itertools.product(*(self.ranges[n] for n in names))
        elif math.prod(hi - lo + 1 for lo, hi in self.ranges.values()) > EXHAUSTIVE_BOUNDS:
            return self._interval()
        values = [self.at(dict(zip(names, point))) for point in every]
        return min(values), max(values)

    def _interval(self) -> tuple[int, int]:
        low = high = 0
        for m, c in self.terms.items():
            term = (c, c)
            for atom in m:
                a_low, a_high = ((self.ranges[atom]) if isinstance(atom, str) else
                                 tuple(b // atom.divisor for b in atom.numerator.bounds()))
                products = [t * a for t in term for a in (a_low, a_high)]
                term = (min(products), max(products))
            low, high = low + term[0], high + term[1]
        return low, high

    def _settle(self, other, test, text: str) -> bool:
        low, high = (self - other).bounds() if isinstance(self - other, Sym) else ((self - other),) * 2
        if test(low) and test(high):
            return True
        if not test(low) and not test(high):
            return False
        raise VariableExtentError(f"whether {self.c()} {text} {_c(other)} depends on the run-time size")

    def __lt__(self, other):
        return self._settle(other, lambda d: d < 0, "<")

    def __le__(self, other):
        return self._settle(other, lambda d: d <= 0, "<=")

    def __gt__(self, other):
        return self._settle(other, lambda d: d > 0, ">")

    def __ge__(self, other):
        return self._settle(other, lambda d: d >= 0, ">=")

    def __eq__(self, other):
        if not isinstance(other, (int, Sym)) and not hasattr(other, "__index__"):
            return NotImplemented
        difference = self - other
        if not isinstance(difference, Sym):
            return difference == 0
        low, high = difference.bounds()
        if low > 0 or high < 0:
            return False
        raise VariableExtentError(f"whether {self.c()} == {_c(other)} depends on the run-time size")

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self):
        return hash(frozenset(self.terms.items()))

    def __bool__(self):
        return self != 0

    def __int__(self):
        raise VariableExtentError(f"{self.c()} is known only at run time")

    __index__ = __int__

    def __str__(self):
        raise VariableExtentError(f"{self.c()} is known only at run time (written without cexpr)")

    __format__ = lambda self, spec: self.__str__()  # noqa: E731

    def __repr__(self):
        return f"Sym({self.text()})"

    def text(self) -> str:
        """Plain text with the variables' own names (`64*seq`), for reports and comments."""
        parts = []
        for m, c in _ordered(self.terms):
            body = "*".join(([str(abs(c))] if abs(c) != 1 or not m else []) + [_atom_key(a) for a in m])
            parts.append(("-" if c < 0 else "+") + body)
        return "".join(parts).lstrip("+")

    def c(self) -> str:
        """C text: `d_seq * 64u + 1u`, terms by degree then name, constants last."""
        parts = []
        for m, c in _ordered(self.terms):
            factors = [_atom_c(a) for a in m]
            if not factors:
                parts.append((c, None))
                continue
            parts.append((c, " * ".join(factors + ([literal(abs(c))] if abs(c) != 1 else []))))
        text = ""
        for c, body in parts:
            body = body if body is not None else literal(abs(c))
            text = body if not text and c > 0 else f"{text} {'-' if c < 0 else '+'} {body}" if text else f"0u - {body}"
        return text

    @property
    def symbols(self) -> list[str]:
        return sorted({s for m in self.terms for a in m for s in _atom_symbols(a)})


def dim_name(symbol: str) -> str:
    """The C variable holding a dimension's size inside the run function."""
    from .cnames import identifier
    return f"d_{identifier(symbol)}"


def is_variable(value) -> bool:
    return isinstance(value, Sym)


def same(a, b) -> bool:
    """Equal at every size: the same number, or the same polynomial (never raises; a Sym that may happen to
    equal a number at some size is not the same)."""
    if isinstance(a, Sym) or isinstance(b, Sym):
        return isinstance(a, Sym) and isinstance(b, Sym) and a.terms == b.terms
    return a == b


def is_zero(value) -> bool:
    """Exactly 0 at every size: a run-time extent whose range starts at 0 is not (its code stays, and moves
    nothing at 0)."""
    return not isinstance(value, Sym) and value == 0


def is_one(value) -> bool:
    """Exactly 1 at every size: a run-time extent never is (its loop stays, and runs once at size 1)."""
    return not isinstance(value, Sym) and value == 1


def text(value) -> str:
    """A number as plain C (no `u`), a run-time size as its C expression, parenthesised when compound."""
    return _parenthesised(value.c()) if isinstance(value, Sym) else str(value)


def bound(value, which: str = "max") -> int:
    """A whole number's greatest (or least) value over its range; an int is itself."""
    if isinstance(value, Sym):
        low, high = value.bounds()
        return high if which == "max" else low
    return int(value)


def _c(value) -> str:
    return value.c() if isinstance(value, Sym) else str(value)


def literal(value) -> str:
    """A size_t literal: `784u`; a run-time size its C expression."""
    if isinstance(value, Sym):
        return value.c()
    return f"{int(value)}u"


def sizes(values) -> str:
    """Template filter: whole numbers as a comma-separated list of size_t literals (`1u, 28u, 28u`), for the
    members of a size_t geometry struct (ptrdiff_t members, as f32-pool's, take plain numbers)."""
    return ", ".join(literal(v) for v in values)


def index(name: str, trips) -> str | int:
    """The loop variable `name`, or 0 when its loop runs once (the loop is then not written; a run-time trip
    count keeps its loop)."""
    return name if isinstance(trips, Sym) or trips > 1 else 0


def _parenthesised(text: str) -> str:
    return f"({text})" if any(c in text for c in " +-*/%") else text


def _term(index, stride) -> str | None:
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    if isinstance(index, int) and not isinstance(stride, Sym):
        return literal(index * stride) if index * stride else None
    if isinstance(index, int):
        return literal(Sym.of(index * stride)) if index else None
    if isinstance(stride, int) and not stride:
        return None
    operand = _parenthesised(index.c() if isinstance(index, Sym) else index)
    if isinstance(stride, Sym):
        return f"{operand} * {_parenthesised(stride.c())}"
    return operand if stride == 1 else f"{operand} * {literal(stride)}"


def offset(base: str | None, *terms: tuple[str | int, int]) -> str | None:
    """`base + index * stride + ...` over the terms that are not 0 (base alone when none is; None when base
    is None too)."""
    used = [t for t in (_term(i, s) for i, s in terms) if t is not None]
    constant = sum(int(t[:-1]) for t in used if t[:-1].isdigit() and t.endswith("u"))
    used = [t for t in used if not (t[:-1].isdigit() and t.endswith("u"))] + ([literal(constant)] if constant else [])
    parts = ([base] if base is not None else []) + used
    return " + ".join(parts) if parts else None


def loop(block: str, name: str, trips: int) -> str:
    """Jinja filter over a braced block `{ ... }`: `for (size_t name = 0; name < trips; ++name) { ... }`, or,
    when the loop runs once, the block's statements alone, one level out (its index terms are already gone
    through `index`)."""
    lines = block.splitlines(keepends=True)
    opening = next(i for i, line in enumerate(lines) if line.strip())
    closing = max(i for i, line in enumerate(lines) if line.strip())
    if lines[opening].strip() != "{" or lines[closing].strip() != "}":
        raise ValueError("the loop filter takes one braced block")
    pad = lines[opening][:len(lines[opening]) - len(lines[opening].lstrip())]
    if isinstance(trips, Sym) or trips > 1:
        lines[opening] = f"{pad}for (size_t {name} = 0; {name} < {literal(trips)}; ++{name}) {{\n"
        return "".join(lines)
    body = lines[opening + 1:closing]
    return "".join(line[4:] if line.startswith(pad + "    ") else line for line in body)


def argument(value) -> str:
    """A kernel argument as C: a whole number as a size_t literal, a float as a float literal, C text as is."""
    if isinstance(value, Sym):
        return value.c()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return literal(value) if isinstance(value, int) else float_literal(value)
