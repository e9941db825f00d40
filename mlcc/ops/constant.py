"""Constant: a tensor from whichever value attribute is given. Always known at build time."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..errors import UnsupportedError
from ..ir import Node
from . import Op, register

# attribute -> numpy dtype of the tensor it makes (None: a tensor attribute keeps its own)
VALUE_ATTRS = {"value": None, "value_float": np.float32, "value_floats": np.float32,
               "value_int": np.int64, "value_ints": np.int64}


@register
class Constant(Op):
    op_type = "Constant"
    attrs = {name: None for name in VALUE_ATTRS}
    always_folded = True

    def value(self, node: Node) -> np.ndarray:
        for name, dtype in VALUE_ATTRS.items():
            if name in node.attrs:
                data = np.asarray(node.attrs[name], dtype=dtype)
                if not dtypes.is_supported(data.dtype):
                    raise UnsupportedError(f"element type {data.dtype} is not supported", node.where())
                return data
        given = ", ".join(sorted(node.attrs)) or "none"
        raise UnsupportedError(f"only tensor, float(s) and int(s) values are supported (given: {given})",
                               node.where())

    def infer(self, node: Node):
        data = self.value(node)
        return [(data.dtype, data.shape)]

    def reference(self, node: Node, inputs):
        return [self.value(node)]
