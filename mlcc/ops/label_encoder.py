"""ai.onnx.ml LabelEncoder on numeric keys and values (v2: keys_int64s/keys_floats, values_int64s/values_floats,
default_int64/default_float; v4: keys_tensor, values_tensor, default_tensor of any numeric type): each input
value found among the keys becomes the matching value, any other the default. The keys become a sorted table
searched by bisection; from opset 4 a NaN key matches NaN (before, no key matches NaN). String keys or values are refused."""

from __future__ import annotations

import numpy as np

from ..errors import UnsupportedError
from ..ir import Node, Value
from . import Op, register
from ._copy import fill_literal
from ._ml import STRING_LABELS_HINT


def _table(node: Node, kind: str) -> np.ndarray | None:
    a = node.attrs
    if a.get(f"{kind}s_strings") or (a.get(f"{kind}s_tensor") is not None and np.asarray(a[f"{kind}s_tensor"]).dtype.kind in "OSU"):
        raise UnsupportedError(f"{kind}s of strings: {STRING_LABELS_HINT}", node.where())
    for name, dtype in ((f"{kind}s_tensor", None), (f"{kind}s_int64s", np.int64), (f"{kind}s_floats", np.float32)):
        if a.get(name) is not None and np.size(a[name]):
            return np.asarray(a[name], dtype).reshape(-1)
    return None


def encoding(node: Node):
    keys, values = _table(node, "key"), _table(node, "value")
    if keys is None or values is None or len(keys) != len(values):
        raise UnsupportedError("keys and values must be given, numeric and of one length", node.where())
    a = node.attrs
    if a.get("default_tensor") is not None:
        default = np.asarray(a["default_tensor"], values.dtype).reshape(-1)[0]
    elif values.dtype.kind == "f":
        default = values.dtype.type(a.get("default_float", -0.0))
    else:
        default = values.dtype.type(a.get("default_int64", -1))
    return keys, values, default


@register
class LabelEncoder(Op):
    op_type = "LabelEncoder"
    domain = "ai.onnx.ml"
    attrs = {"default_float": -0.0, "default_int64": -1, "default_string": None, "default_tensor": None,
             "keys_floats": None, "keys_int64s": None, "keys_strings": None, "keys_tensor": None,
             "values_floats": None, "values_int64s": None, "values_strings": None, "values_tensor": None}
    elementwise = True

    def infer(self, node: Node):
        x = node.inputs[0]
        keys, values, _ = encoding(node)
        if x.dtype != keys.dtype:
            raise UnsupportedError(f"X of type {x.dtype.name} but keys of {keys.dtype.name}", node.where())
        return [(values.dtype, x.shape)]

    def lower(self, node: Node, ctx) -> None:
        x, y = node.inputs[0], node.outputs[0]
        keys, values, default = encoding(node)
        nan = np.isnan(keys) if keys.dtype.kind == "f" else np.zeros(len(keys), bool)
        matches_nan = nan.any() and node.opset >= 4  # from opset 4 a NaN key matches NaN; before, nothing does
        nan_value = fill_literal(values[np.flatnonzero(nan)[0]], values.dtype) if matches_nan else None
        keys, values = keys[~nan], values[~nan]
        keys, first = np.unique(keys, return_index=True)  # onnxruntime keeps a repeated key's first value
        values = values[first]
        ctx.emit("ops/label_encoder.c.j2", x=ctx.ptr(x), y=ctx.ptr(y), count=x.size, key_type=ctx.c_type(x),
                 keys=ctx.constant(Value(f"{node.name}_keys", keys.dtype, keys.shape, keys)), keys_count=len(keys),
                 values=ctx.constant(Value(f"{node.name}_values", values.dtype, values.shape, values)),
                 default=fill_literal(default, values.dtype), nan_value=nan_value, floating=x.dtype.kind == "f")
