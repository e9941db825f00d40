"""The element types mlcc handles: numpy dtype <-> ONNX elem type <-> C type. One table, one home."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from .errors import ModelLoadError, UnsupportedError

# numpy name -> (ONNX elem type, C type)
_TABLE = {
    "float32": (TensorProto.FLOAT, "float"),
    "float64": (TensorProto.DOUBLE, "double"),
    "float16": (TensorProto.FLOAT16, "uint16_t"),
    "int8": (TensorProto.INT8, "int8_t"),
    "int16": (TensorProto.INT16, "int16_t"),
    "int32": (TensorProto.INT32, "int32_t"),
    "int64": (TensorProto.INT64, "int64_t"),
    "uint8": (TensorProto.UINT8, "uint8_t"),
    "uint16": (TensorProto.UINT16, "uint16_t"),
    "uint32": (TensorProto.UINT32, "uint32_t"),
    "uint64": (TensorProto.UINT64, "uint64_t"),
    "bool": (TensorProto.BOOL, "bool"),
}
_BY_ONNX = {onnx_type: np.dtype(name) for name, (onnx_type, _) in _TABLE.items()}


STRINGS_HINT = ("mlcc compiles numbers only; encode the strings as integers before the model (e.g. with sklearn's "
                "OrdinalEncoder or LabelEncoder outside the exported pipeline) and export the model on those")


def from_onnx(elem_type: int, where: str | None = None) -> np.dtype:
    try:
        return _BY_ONNX[elem_type]
    except KeyError:
        name = TensorProto.DataType.Name(elem_type) if elem_type in TensorProto.DataType.values() else elem_type
        if elem_type == TensorProto.STRING:
            raise UnsupportedError(f"element type STRING is not supported: {STRINGS_HINT}", where) from None
        raise UnsupportedError(f"element type {name} is not supported", where) from None


def to_onnx(dtype: np.dtype) -> int:
    return _TABLE[np.dtype(dtype).name][0]


def c_type(dtype: np.dtype) -> str:
    return _TABLE[np.dtype(dtype).name][1]


def is_supported(dtype: np.dtype) -> bool:
    return np.dtype(dtype).name in _TABLE


def tensor_array(tensor, where: str) -> np.ndarray:
    """A TensorProto's data as numpy; a tensor whose bytes do not match its type and dims is a load error."""
    from onnx import numpy_helper

    try:
        return numpy_helper.to_array(tensor)
    except Exception as exc:  # onnx raises ValueError, KeyError, TypeError on mangled tensors
        raise ModelLoadError(f"unreadable tensor data ({type(exc).__name__}: its bytes do not match its type and "
                             "dims)", where) from None
