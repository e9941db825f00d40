"""C index arithmetic built from integers, folded as a careful hand would write it.

One convention for size_t arithmetic: every integer literal in it carries `u` (`784u`), so element counts,
strides and trip counts never mix signed and unsigned operands. `offset` drops terms whose index or stride
is 0 and writes `* 1` as nothing; `index(name, trips)` is the loop variable, or 0 for a loop that runs once;
the template filter `loop` turns a braced block into `for (size_t name = 0; name < trips; ++name) { ... }`,
or into its statements alone (one level out) when trips is 1, its index terms then already gone through `index`.
"""

from __future__ import annotations

from .cnames import float_literal


def literal(value: int) -> str:
    """A size_t literal: `784u`."""
    return f"{int(value)}u"


def sizes(values) -> str:
    """Template filter: whole numbers as a comma-separated list of size_t literals (`1u, 28u, 28u`), for the
    members of a size_t geometry struct (ptrdiff_t members, as f32-pool's, take plain numbers)."""
    return ", ".join(literal(v) for v in values)


def index(name: str, trips: int) -> str | int:
    """The loop variable `name`, or 0 when its loop runs once (the loop is then not written)."""
    return name if trips > 1 else 0


def _term(index: str | int, stride: int) -> str | None:
    if isinstance(index, str) and index.isdigit():
        index = int(index)
    if isinstance(index, int):
        return literal(index * stride) if index * stride else None
    if not stride:
        return None
    operand = f"({index})" if any(c in index for c in " +-*/%") else index
    return operand if stride == 1 else f"{operand} * {literal(stride)}"


def offset(base: str | None, *terms: tuple[str | int, int]) -> str | None:
    """`base + index * stride + ...` over the terms that are not 0 (base alone when none is; None when base
    is None too)."""
    used = [t for t in (_term(i, s) for i, s in terms) if t is not None]
    constant = sum(int(t[:-1]) for t in used if t[:-1].isdigit())
    used = [t for t in used if not t[:-1].isdigit()] + ([literal(constant)] if constant else [])
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
    if trips > 1:
        lines[opening] = f"{pad}for (size_t {name} = 0; {name} < {literal(trips)}; ++{name}) {{\n"
        return "".join(lines)
    body = lines[opening + 1:closing]
    return "".join(line[4:] if line.startswith(pad + "    ") else line for line in body)


def argument(value) -> str:
    """A kernel argument as C: a whole number as a size_t literal, a float as a float literal, C text as is."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return literal(value) if isinstance(value, int) else float_literal(value)
