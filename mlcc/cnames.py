"""Turning ONNX names (arbitrary user text) into safe C: identifiers, comments and literals.

ONNX names never reach C except through these functions, so a hostile name cannot inject code.
"""

from __future__ import annotations

import hashlib
import math
import re

_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int "
    "long register restrict return short signed sizeof static struct switch typedef union unsigned void "
    "volatile while _Bool _Complex _Imaginary bool true false NULL".split()
)
_MAX_IDENT = 40


def _words(text: str) -> str:
    return re.sub(r"__+", "_", re.sub(r"[^A-Za-z0-9_]+", "_", text)).strip("_")


def _shorten(words: str) -> str:
    """At most _MAX_IDENT characters, cut after a whole word (mid-word only when the first word is longer)."""
    if len(words) <= _MAX_IDENT:
        return words
    kept = ""
    for word in words.split("_"):
        if len(kept) + bool(kept) + len(word) > _MAX_IDENT:
            break
        kept = f"{kept}_{word}" if kept else word
    return kept or words[:_MAX_IDENT]


def identifier(text: str, prefix: str = "") -> str:
    """A C identifier made from `text`: [A-Za-z0-9_] only, never a keyword, never starting with a digit;
    a long text is cut at a word boundary."""
    ident = prefix + (_shorten(_words(text)) or "t")
    if ident[0].isdigit() or ident in _C_KEYWORDS:
        ident = "v_" + ident
    return ident


def fresh_identifier(text: str, prefix: str, taken: set[str]) -> str:
    """identifier(text, prefix), made unique among `taken` (and added to it). A shortened one that clashes
    takes a short hash of the whole text, so it does not depend on the order names are made; any other clash
    (or a clash of hashes) a counter."""
    base = identifier(text, prefix)
    if base in taken and len(_words(text)) > _MAX_IDENT:
        base = f"{base}_{hashlib.sha256(text.encode()).hexdigest()[:4]}"
    ident, i = base, 1
    while ident in taken:
        i += 1
        ident = f"{base}_{i}"
    taken.add(ident)
    return ident


def is_identifier(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text)) and text not in _C_KEYWORDS


def comment_text(text: str) -> str:
    """Text safe inside a /* */ comment on one line: printable ASCII, no comment terminator."""
    safe = "".join(ch if 32 <= ord(ch) < 127 else f"\\u{ord(ch):04x}" for ch in str(text))
    return safe.replace("*/", "*\\/").replace("/*", "/\\*").replace("??", "?\\?")


def string_literal(text: str) -> str:
    """A C string literal holding `text`, with every non-printable or special byte escaped."""
    out = []
    for byte in str(text).encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\?':
            out.append("\\" + ch)
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def float_literal(x: float) -> str:
    """A float constant that round-trips exactly through float32."""
    x = float(x)
    if math.isnan(x):
        return "NAN"
    if math.isinf(x):
        return "INFINITY" if x > 0 else "(-INFINITY)"
    text = repr(float(__import__("numpy").float32(x)))
    if "e" not in text and "." not in text:
        text += ".0"
    return f"{text}f" if not text.startswith("-") else f"({text}f)"


def int_literal(x: int) -> str:
    x = int(x)
    if x == -(2**63):
        return "INT64_MIN"
    return f"{x}" if -(2**31) <= x < 2**31 else (f"INT64_C({x})")
