"""Golden tests of the data-movement ops (Concat, Split, Reshape, Transpose, Slice, Pad, Gather, ...) on every
target, over float32, int64 and bool data and each opset form. These ops only move bytes, so results must
match onnxruntime exactly (rtol=atol=0)."""

import numpy as np
import pytest

from mlcc.errors import UnsupportedError
from tests.golden import build_and_run, check_model, node_model, rand

EXACT = {"rtol": 0.0, "atol": 0.0}


def ints(*shape, seed=0):
    return np.random.default_rng(seed).integers(-1000, 1000, shape).astype(np.int64)


def bools(*shape, seed=0):
    return np.random.default_rng(seed).random(shape) < 0.5


DATA = {"float32": rand, "int64": ints, "bool": bools}


def i64(*values):
    return np.array(values, dtype=np.int64)


def check(op, inputs, attrs=None, *, target, tmp_path, opset=17, initializers=None, outputs=("y",)):
    """Build a one-node model over graph inputs `inputs` and constant `initializers` and compare exactly."""
    model = node_model(op, inputs, outputs if isinstance(outputs, dict) else list(outputs), attrs, opset=opset,
                       initializers=initializers)
    return check_model(model, inputs, target, tmp_path, **EXACT)


# --- Concat / Split -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,axis", [("float32", 1), ("int64", -1), ("bool", 0)])
def test_concat(dtype, axis, target, tmp_path):
    make = DATA[dtype]
    a, b = make(2, 3, 4, seed=1), make(2, 3, 4, seed=2)
    c = make(2, 3, 4, seed=3)
    check("Concat", {"a": a, "b": b}, {"axis": axis}, initializers={"c": c}, target=target, tmp_path=tmp_path)


def test_concat_uneven_with_empty_piece(target, tmp_path):
    a, b = rand(2, 1, 3), rand(2, 5, 3, seed=1)
    check("Concat", {"a": a, "b": b}, {"axis": 1}, initializers={"e": np.zeros((2, 0, 3), np.float32)},
          target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("opset,attrs,initializers,count,dim", [
    (11, {"axis": 1, "split": [1, 4, 1]}, {}, 3, 6),  # split attribute
    (13, {"axis": -1}, {"split": i64(2, 3)}, 2, 6),  # split input, negative axis
    (13, {"axis": 1}, {}, 3, 6),  # equal parts
    (18, {"axis": 1, "num_outputs": 4}, {}, 4, 7),  # uneven: 2, 2, 2, 1
])
def test_split(opset, attrs, initializers, count, dim, target, tmp_path):
    x = rand(2, dim, 5)
    check("Split", {"x": x}, attrs, opset=opset, initializers=initializers, outputs=[f"y{i}" for i in range(count)],
          target=target, tmp_path=tmp_path)


def test_split_int64(target, tmp_path):
    x = ints(3, 4)
    check("Split", {"x": x}, {"axis": 0}, opset=13, initializers={"s": i64(1, 2)}, outputs=["y0", "y1"],
          target=target, tmp_path=tmp_path)


# --- Reshape family -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,shape,attrs", [
    ("float32", (0, -1), {}), ("int64", (4, 0, 3, -1), {}), ("bool", (6, -1), {"allowzero": 1}),
])
def test_reshape(dtype, shape, attrs, target, tmp_path):
    x = DATA[dtype](4, 3, 6)
    check("Reshape", {"x": x}, attrs, opset=14, initializers={"shape": i64(*shape)}, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_flatten(axis, target, tmp_path):
    x = ints(2, 3, 4)
    check("Flatten", {"x": x}, {"axis": axis}, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("opset,axes", [(11, [1, -1]), (13, [1, -1]), (13, None)])
def test_squeeze(opset, axes, target, tmp_path):
    x = rand(3, 1, 4, 1)
    attrs, inits = ({"axes": axes} if axes else {}), {}
    if opset >= 13 and axes:
        attrs, inits = {}, {"axes": i64(*axes)}
    check("Squeeze", {"x": x}, attrs, opset=opset, initializers=inits, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("opset", [11, 13])
def test_unsqueeze(opset, target, tmp_path):
    x = bools(3, 4)
    axes = [0, -1]
    attrs, inits = ({"axes": axes}, {}) if opset < 13 else ({}, {"axes": i64(*axes)})
    check("Unsqueeze", {"x": x}, attrs, opset=opset, initializers=inits, target=target, tmp_path=tmp_path)


# --- Transpose, DepthToSpace, SpaceToDepth ------------------------------------------------------
@pytest.mark.parametrize("dtype,perm", [("float32", [0, 2, 3, 1]), ("int64", None), ("bool", [3, 1, 0, 2])])
def test_transpose(dtype, perm, target, tmp_path):
    x = DATA[dtype](2, 3, 4, 5)
    check("Transpose", {"x": x}, {"perm": perm} if perm else {}, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode, target, tmp_path):
    x = rand(2, 8, 3, 4)
    check("DepthToSpace", {"x": x}, {"blocksize": 2, "mode": mode}, target=target, tmp_path=tmp_path)


def test_space_to_depth(target, tmp_path):
    x = rand(1, 3, 4, 6)
    check("SpaceToDepth", {"x": x}, {"blocksize": 2}, target=target, tmp_path=tmp_path)


# --- Slice --------------------------------------------------------------------------------------
def test_slice_opset9_attributes(target, tmp_path):
    x = rand(4, 6, 5)
    check("Slice", {"x": x}, {"starts": [1, -4], "ends": [3, 1000], "axes": [0, -2]}, opset=9,
          outputs={"y": (np.float32, (2, 4, 5))}, target=target, tmp_path=tmp_path)  # onnx infers no shape


BIG = 2**63 - 1


@pytest.mark.parametrize("dtype,starts,ends,axes,steps", [
    ("float32", [1, 0], [3, 5], [0, 2], None),  # no steps
    ("int64", [-1, 1], [-BIG, 6], [1, -1], [-2, 2]),  # negative step to the start, negative axis
    ("float32", [-1000, 2], [1000, -1], None, [1, 1]),  # clamping, no axes
    ("bool", [5, 4], [1, 0], [1, 2], [-1, -3]),  # negative steps inside
    ("float32", [2], [2], [0], [1]),  # empty result
])
def test_slice(dtype, starts, ends, axes, steps, target, tmp_path):
    x = DATA[dtype](4, 6, 5)
    inits = {"starts": i64(*starts), "ends": i64(*ends)}
    if axes is not None:
        inits["axes"] = i64(*axes)
    if steps is not None:
        if axes is None:
            inits["axes"] = i64(*range(len(starts)))
        inits["steps"] = i64(*steps)
    check("Slice", {"x": x}, opset=13, initializers=inits, target=target, tmp_path=tmp_path)


# --- Pad ----------------------------------------------------------------------------------------
def test_pad_opset9_attributes(target, tmp_path):
    x = rand(2, 3, 4)
    check("Pad", {"x": x}, {"pads": [0, 1, 2, 1, 0, 3], "value": 1.5}, opset=9, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_pad_modes(mode, dtype, target, tmp_path):
    x = DATA[dtype](2, 4, 5)
    inits = {"pads": i64(0, 2, 1, 1, 3, 4) if mode != "reflect" else i64(0, 2, 1, 1, 3, 2)}
    if mode == "constant":
        inits["value"] = np.array(7, dtype=dtype)
    check("Pad", {"x": x}, {"mode": mode}, opset=13, initializers=inits, target=target, tmp_path=tmp_path)


def test_pad_negative_pads_and_zero_default(target, tmp_path):
    x = rand(3, 6)
    check("Pad", {"x": x}, opset=13, initializers={"pads": i64(-1, 2, 1, -3)}, target=target, tmp_path=tmp_path)


def test_pad_axes_input(target, tmp_path):
    x = rand(2, 3, 4)
    check("Pad", {"x": x}, {"mode": "reflect", "_order": ["x", "pads", "", "axes"]}, opset=18,
          initializers={"pads": i64(2, 1, 3, 2), "axes": i64(-1, 1)}, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("pads", [(1, 3, 2, 4), (0, 9, 1, 6)])  # the second wraps around more than once
def test_pad_wrap(pads, target, tmp_path):
    x = rand(3, 4)
    check("Pad", {"x": x}, {"mode": "wrap"}, opset=19, initializers={"pads": i64(*pads)},
          target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.uint8])
def test_pad_constant_other_types(dtype, target, tmp_path):  # the fill literal is per type (float16: its bits)
    x = rand(3, 4).astype(dtype)
    value = np.array(200 if dtype == np.uint8 else -2.5, dtype)
    check("Pad", {"x": x}, opset=13, initializers={"pads": i64(1, 0, 0, 2), "value": value},
          target=target, tmp_path=tmp_path)


def test_pad_bool(target, tmp_path):
    x = bools(3, 4)
    check("Pad", {"x": x}, {"mode": "edge"}, opset=13, initializers={"pads": i64(1, 0, 0, 2)},
          target=target, tmp_path=tmp_path)


# --- Gather -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,axis,index_type", [
    ("float32", 0, np.int64), ("int64", 1, np.int32), ("bool", -1, np.int64),
])
def test_gather_runtime_indices(dtype, axis, index_type, target, tmp_path):
    x = DATA[dtype](4, 5, 3)
    dim = x.shape[axis]
    idx = np.array([[0, -1], [dim - 1, -dim], [1, 1]], dtype=index_type)
    check("Gather", {"x": x, "i": idx}, {"axis": axis}, target=target, tmp_path=tmp_path)


def test_gather_runtime_scalar_index(target, tmp_path):
    x, idx = ints(4, 3), np.array(-2, np.int64)
    check("Gather", {"x": x, "i": idx}, {"axis": 0}, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("indices", [np.array(-2, np.int64), i64(3, 1, -1), i64(0, 2, 4), np.array([[1, 0]], np.int32)])
def test_gather_constant_indices(indices, target, tmp_path):
    x = rand(3, 5, 2)
    check("Gather", {"x": x}, {"axis": 1}, initializers={"i": indices}, target=target, tmp_path=tmp_path)


def test_gather_empty_indices(target, tmp_path):  # (graph inputs can't be empty: mlcc refuses 0 dims)
    x = rand(3, 4)
    check("Gather", {"x": x}, {"axis": 1}, initializers={"i": np.zeros((0,), np.int64)}, target=target,
          tmp_path=tmp_path)


def test_gather_constant_data(target, tmp_path):
    table = rand(10, 4)
    idx = i64(3, -1, 0)
    check("Gather", {"i": idx}, {"axis": 0, "_order": ["table", "i"]}, initializers={"table": table},
          target=target, tmp_path=tmp_path)


# --- Expand / Tile ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype,in_shape,shape", [
    ("float32", (3, 1), (2, 3, 4)), ("int64", (1, 4), (3, 1)), ("bool", (2, 1, 3), (2, 4, 3)),
])
def test_expand(dtype, in_shape, shape, target, tmp_path):
    x = DATA[dtype](*in_shape)
    check("Expand", {"x": x}, initializers={"shape": i64(*shape)}, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("dtype,repeats", [("float32", (2, 1, 3)), ("int64", (1, 3, 1)), ("bool", (3, 2, 2))])
def test_tile(dtype, repeats, target, tmp_path):
    x = DATA[dtype](2, 3, 4)
    check("Tile", {"x": x}, initializers={"repeats": i64(*repeats)}, target=target, tmp_path=tmp_path)


# --- Identity / Dropout -------------------------------------------------------------------------
@pytest.mark.parametrize("opt_level", [0, 2])
def test_identity(opt_level, target, tmp_path):
    x = ints(3, 4)
    model = node_model("Identity", {"x": x}, ["y"])
    check_model(model, {"x": x}, target, tmp_path, opt_level=opt_level, **EXACT)


@pytest.mark.parametrize("opt_level", [0, 2])
@pytest.mark.parametrize("opset", [9, 13])
def test_dropout_with_mask(opset, opt_level, target, tmp_path):
    x = rand(3, 4)
    inits = {"ratio": np.array(0.3, np.float32), "training_mode": np.array(False)} if opset >= 12 else {}
    mask_type = np.float32 if opset < 10 else np.bool_
    outputs = {"y": (np.float32, (3, 4)), "mask": (mask_type, (3, 4))}
    model = node_model("Dropout", {"x": x}, outputs, {"ratio": 0.3} if opset < 12 else {},
                       opset=opset, initializers=inits)
    # before opset 10 onnxruntime returns an all-zero mask; nothing is dropped, so mlcc's is all ones
    # (as onnx's reference and later opsets say)
    expected = {"y": x, "mask": np.ones((3, 4), mask_type)} if opset < 10 else None
    report = check_model(model, {"x": x}, target, tmp_path, opt_level=opt_level, expected=expected, **EXACT)
    assert "Dropout" in report["ops"]  # its mask is an output, so the node stays


def test_dropout_training_mode_is_refused(tmp_path):
    x = rand(3, 4)
    model = node_model("Dropout", {"x": x}, ["y"], opset=13,
                       initializers={"ratio": np.array(0.5, np.float32), "training_mode": np.array(True)})
    with pytest.raises(UnsupportedError, match="training-mode"):
        build_and_run(model, {"x": x}, "host", tmp_path, opt_level=0)


@pytest.mark.parametrize("opt_level", [0, 2])
def test_dropout_removed_at_inference(opt_level, target, tmp_path):
    x = rand(3, 4)
    model = node_model("Dropout", {"x": x}, ["y"], opset=13)
    report = check_model(model, {"x": x}, target, tmp_path, opt_level=opt_level, **EXACT)
    assert ("Dropout" in report["ops"]) == (opt_level == 0)
