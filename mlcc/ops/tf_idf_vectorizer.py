"""TfIdfVectorizer over integer tokens: per row of X ([C] or [B, C]), how often each n-gram of the pool occurs,
weighted by `mode`. The pool is known at build time, so it becomes a trie in static tables (siblings sorted
by token, each node's children contiguous) and the generated C only scans the input: for each skip distance
d (1 .. max_skip_count + 1) and each start, it follows tokens start, start + d, ... down the trie, counting
every node that ends a pool n-gram of min_gram_length .. max_gram_length tokens. Unigrams count with d = 1
only. Output columns come from ngram_indexes (a later duplicate of an n-gram wins, as in onnx's reference).
Then TF keeps the counts, IDF writes weights[j] (or 1) where a count is non-zero, TFIDF multiplies by weights.
String pools (pool_strings) are not supported: mlcc has no string tensors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import REQUIRED, Op, register

MODES = ("TF", "IDF", "TFIDF")


@dataclass
class _TrieNode:
    column: int = -1  # output column of the pool n-gram ending here, -1 for a mere prefix
    children: dict[int, "_TrieNode"] = field(default_factory=dict)


def pool_ngrams(attrs: dict) -> list[tuple[tuple[int, ...], int]]:
    """(tokens, output column) of each pool n-gram whose length is in [min_gram_length, max_gram_length]."""
    pool, starts, columns = list(attrs["pool_int64s"]), list(attrs["ngram_counts"]), list(attrs["ngram_indexes"])
    found, ordinal = [], 0  # ordinal: the n-gram's index in the whole pool, which picks its column
    for size, start in enumerate(starts, 1):
        end = starts[size] if size < len(starts) else len(pool)
        for at in range(start, start + (end - start) // size * size, size):
            if attrs["min_gram_length"] <= size <= attrs["max_gram_length"]:
                found.append((tuple(pool[at:at + size]), columns[ordinal]))
            ordinal += 1
    return found


def flat_trie(ngrams) -> tuple[list[int], list[int], list[int], list[int], int]:
    """The trie of `ngrams` as tables (token, column, first child, end of children) in breadth-first order,
    siblings contiguous and sorted by token; and the count of the root's children (entries 0 .. count-1)."""
    root = _TrieNode()
    for tokens, column in ngrams:
        at = root
        for token in tokens:
            at = at.children.setdefault(token, _TrieNode())
        at.column = column
    tokens, columns, first, end = [], [], [], []
    level, placed = sorted(root.children.items()), 0
    while level:
        placed += len(level)  # the next level starts after this one
        following = []
        for token, node in level:
            tokens.append(token)
            columns.append(node.column)
            first.append(placed + len(following))
            following.extend(sorted(node.children.items()))
            end.append(placed + len(following))
        level = following
    return tokens, columns, first, end, len(root.children)


@register
class TfIdfVectorizer(Op):
    op_type = "TfIdfVectorizer"
    attrs = {"mode": REQUIRED, "min_gram_length": REQUIRED, "max_gram_length": REQUIRED, "max_skip_count": REQUIRED,
             "ngram_counts": REQUIRED, "ngram_indexes": REQUIRED, "pool_int64s": None, "pool_strings": None,
             "weights": None}

    def infer(self, node: Node):
        x, attrs = node.inputs[0], node.attrs
        if attrs.get("pool_strings"):
            raise UnsupportedError("string pools (pool_strings) are not supported; mlcc has no string tensors", node.where())
        if attrs.get("pool_int64s") is None:
            raise UnsupportedError("pool_int64s is required", node.where())
        if attrs["mode"] not in MODES:
            raise UnsupportedError(f"mode {attrs['mode']!r} is not one of {', '.join(MODES)}", node.where())
        if x.dtype not in (np.int32, np.int64):
            raise UnsupportedError(f"input of type {x.dtype.name}: int32 or int64 tokens only", node.where())
        if len(x.shape) > 2 or (len(x.shape) == 2 and x.shape[0] < 1):
            raise UnsupportedError(f"input of shape {list(x.shape)}: [C] or [B, C] with B > 0 only", node.where())
        if not attrs["ngram_indexes"] or min(attrs["ngram_indexes"]) < 0:
            raise UnsupportedError("ngram_indexes must be non-empty and non-negative", node.where())
        width = max(attrs["ngram_indexes"]) + 1
        weights = attrs.get("weights")
        if weights is not None and len(weights) and len(weights) < width:
            raise UnsupportedError(f"weights has {len(weights)} entries for {width} output columns", node.where())
        return [(np.dtype(np.float32), (x.shape[0], width) if len(x.shape) == 2 else (width,))]

    def lower(self, node: Node, ctx) -> None:
        x, y, attrs = node.inputs[0], node.outputs[0], node.attrs
        rows, length = (x.shape[0], x.shape[1]) if len(x.shape) == 2 else (1, x.size)
        width = y.shape[-1]
        min_n, max_n = int(attrs["min_gram_length"]), int(attrs["max_gram_length"])
        tokens, columns, first, end, roots = flat_trie(pool_ngrams(attrs))
        scan = None
        if tokens and length:
            hint = f"{len(tokens)} trie nodes"
            scan = dict(
                roots=roots, max_n=max_n, distances=int(attrs["max_skip_count"]) + 1 if max_n >= 2 else 1,
                shortest=min_n, shortest_skipping=max(min_n, 2), token_type=ctx.c_type(x),
                tokens=ctx.static_array("tokens", "int64_t", tokens, f"{hint}: token, siblings sorted"),
                columns=ctx.static_array("columns", "int32_t", columns, "output column of the n-gram ending there, or -1"),
                first=ctx.static_array("first_child", "int32_t", first, "children: first .. end - 1"),
                end=ctx.static_array("end_child", "int32_t", end))
        weights = attrs.get("weights")
        weights = np.asarray(weights, np.float32)[:width] if weights is not None and len(weights) else None
        weighting = {"TF": None, "IDF": "presence", "TFIDF": "scale" if weights is not None else None}[attrs["mode"]]
        table = None
        if weighting and weights is not None:
            table = ctx.constant(Value(f"{node.name}_weights", np.dtype(np.float32), weights.shape, weights))
        ctx.emit("ops/tf_idf_vectorizer.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), rows=rows, length=length, width=width,
                 scan=scan, weighting=weighting, weights=table)
