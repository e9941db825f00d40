"""What ai.onnx.ml ops share: attributes given either as a list or as a tensor (`NAME_as_tensor`), the post
transforms (NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT) as the template macro ops/ml_post_transform.c.j2
takes them, and the one error for string tensors."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node
from ._copy import fill_literal
from ._trees import WINITZKI_A

POST_TRANSFORMS = {"NONE": None, "SOFTMAX": "softmax", "LOGISTIC": "logistic", "SOFTMAX_ZERO": "softmax_zero",
                   "PROBIT": "probit"}
STRING_LABELS_HINT = ("string tensors are not supported; train on integer class labels (e.g. encode them with "
                      "sklearn's LabelEncoder first) so the model's labels are int64")


def post_transform(node: Node) -> str | None:
    name = node.attrs.get("post_transform", "NONE")
    if name not in POST_TRANSFORMS:
        raise UnsupportedError(f"post_transform {name!r} is not one of {', '.join(POST_TRANSFORMS)}", node.where())
    return POST_TRANSFORMS[name]


def floats(node: Node, name: str, dtype=None) -> np.ndarray | None:
    """Attribute NAME (a list of floats) or NAME_as_tensor, as an array of its own dtype (float32 for the list)."""
    tensor = node.attrs.get(f"{name}_as_tensor")
    if tensor is not None:
        return np.asarray(tensor).reshape(-1) if dtype is None else np.asarray(tensor, dtype).reshape(-1)
    given = node.attrs.get(name)
    if given is None:
        return None
    return np.asarray(given, np.float32 if dtype is None else dtype).reshape(-1)


def literals(dtype, probit_infinite: bool = True) -> dict:
    """The C literals of `dtype` that the post-transform macro uses (probit_infinite: see the macro)."""
    lit = {k: fill_literal(v, dtype) for k, v in (("zero", 0.0), ("half", 0.5), ("one", 1.0), ("two", 2.0),
                                                 ("tiny", 1e-7), ("sqrt2", 1.41421356))}
    lit["probit_infinite"] = probit_infinite
    lit["winitzki"] = (fill_literal(2.0 / (np.pi * WINITZKI_A), dtype), fill_literal(1.0 / WINITZKI_A, dtype))
    return lit


def math_suffix(dtype) -> str:
    return "f" if np.dtype(dtype) == np.float32 else ""


def refuse_strings(node: Node, *names: str) -> None:
    """One clear error for an attribute that would make a string tensor."""
    for name in names:
        if node.attrs.get(name):
            raise UnsupportedError(f"attribute {name!r}: {STRING_LABELS_HINT}", node.where())


def numeric_input(node: Node, index: int = 0, kinds: str = "fiu"):
    x = node.inputs[index]
    if np.dtype(x.dtype).kind not in kinds or x.dtype == np.bool_:
        raise UnsupportedError(f"input {x.name!r} of type {np.dtype(x.dtype).name}: numbers only", node.where())
    return x
