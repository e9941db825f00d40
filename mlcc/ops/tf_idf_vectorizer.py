"""TfIdfVectorizer over integer tokens: per row of X ([C] or [B, C]), how often each n-gram of the pool occurs,
weighted by `mode`. The pool is known at build time, so it becomes a trie in static tables (siblings sorted
by token, each node's children contiguous) and the generated C only scans the input: for each skip distance
d (1 .. max_skip_count + 1) and each start, it follows tokens start, start + d, ... down the trie, counting
every node that ends a pool n-gram of min_gram_length .. max_gram_length tokens. Unigrams count with d = 1
only. Output columns come from ngram_indexes (a later duplicate of an n-gram wins, as in onnx's reference).
Then TF keeps the counts, IDF writes a column's weight (or 1) where its count is non-zero, TFIDF multiplies the
count by it. weights[i] belongs to the i-th pool n-gram, so to column ngram_indexes[i] (as in the spec and
onnxruntime; onnx's reference reads weights[column], the same for the usual identity ngram_indexes).
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


def column_weights(attrs: dict, width: int) -> np.ndarray | None:
    """Each output column's weight (the weight of the n-gram counted there), or None without weights."""
    weights = attrs.get("weights")
    if weights is None or not len(weights):
        return None
    table = np.zeros(width, np.float32)
    for column, weight in zip(attrs["ngram_indexes"], weights):
        table[column] = weight
    return table


def count_ngrams(attrs: dict, rows: np.ndarray) -> np.ndarray:
    """The C scan in numpy: per row, how often each output column's n-gram occurs."""
    min_n, max_n, skips = attrs["min_gram_length"], attrs["max_gram_length"], attrs["max_skip_count"]
    columns = dict(pool_ngrams(attrs))
    counts = np.zeros((len(rows), max(attrs["ngram_indexes"]) + 1), np.float32)
    for r, row in enumerate(rows.tolist()):
        for d in range(1, skips + 2 if max_n >= 2 else 2):
            for start in range(len(row)):
                for n in range(min_n if d == 1 else max(min_n, 2), max_n + 1):
                    tokens = tuple(row[start:start + (n - 1) * d + 1:d])
                    if len(tokens) == n and tokens in columns:
                        counts[r, columns[tokens]] += 1
    return counts


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
        if weights is not None and len(weights) and len(weights) < len(attrs["ngram_indexes"]):
            raise UnsupportedError(f"weights has {len(weights)} entries for {len(attrs['ngram_indexes'])} n-grams",
                                   node.where())
        return [(np.dtype(np.float32), (x.shape[0], width) if len(x.shape) == 2 else (width,))]

    def reference(self, node: Node, inputs):
        x, attrs = inputs[0], node.attrs
        counts = count_ngrams(attrs, x.reshape(-1, x.shape[-1] if x.ndim else 1))
        weights = column_weights(attrs, counts.shape[1])
        weights = np.ones(counts.shape[1], np.float32) if weights is None else weights
        if attrs["mode"] == "IDF":
            counts = np.where(counts > 0, weights, np.float32(0))
        elif attrs["mode"] == "TFIDF":
            counts = counts * weights
        return [counts.reshape(counts.shape if x.ndim == 2 else counts.shape[1:]).astype(np.float32)]

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
        weights = column_weights(attrs, width)
        weighting = {"TF": None, "IDF": "presence", "TFIDF": "scale" if weights is not None else None}[attrs["mode"]]
        table = None
        if weighting and weights is not None:
            table = ctx.constant(Value(f"{node.name}_weights", np.dtype(np.float32), weights.shape, weights))
        ctx.emit("ops/tf_idf_vectorizer.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), rows=rows, length=length, width=width,
                 scan=scan, weighting=weighting, weights=table)
