"""Golden tests of the indexing ops (GatherElements, GatherND, ScatterElements, Scatter, ScatterND, TensorScatter,
OneHot, Trilu, EyeLike, ReverseSequence, MaxUnpool, Col2Im, CenterCropPad, Compress) on every target, and of
the value-dependent ones (NonZero, Unique, NonMaxSuppression) folding when constant. Moves are exact
(rtol=atol=0); only sums and products state a tolerance. Run-time indices stay graph inputs."""

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from mlcc.errors import NeedsConstantError, ShapeError
from tests.golden import build_and_run, check_model, node_model, rand

EXACT = {"rtol": 0.0, "atol": 0.0}


def ints(*shape, seed=0, low=-1000, high=1000, dtype=np.int64):
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


def check(op, inputs, attrs=None, *, target, tmp_path, opset=18, initializers=None, outputs=("y",), tol=EXACT,
          by_reference=False):
    """One node over graph inputs `inputs` and constants `initializers`, compared with onnxruntime (or with
    onnx.reference when `by_reference`: ops onnxruntime lacks, or forms where it departs from the ONNX cases)."""
    model = node_model(op, inputs, outputs if isinstance(outputs, dict) else list(outputs), attrs, opset=opset,
                       initializers=initializers)
    expected = None
    if by_reference:
        names = list(outputs)
        expected = dict(zip(names, ReferenceEvaluator(model).run(names, inputs)))
    return check_model(model, inputs, target, tmp_path, expected=expected, **tol)


# --- GatherElements / GatherND ------------------------------------------------------------------
@pytest.mark.parametrize("data_shape,index_shape,axis,index_dtype", [
    ((3, 4), (2, 4), 0, np.int64),
    ((3, 5), (3, 2), -1, np.int32),  # negative indices too
    ((2, 6, 3), (2, 4, 2), 1, np.int64),  # indices smaller than data off the axis
])
def test_gather_elements(data_shape, index_shape, axis, index_dtype, target, tmp_path):
    dim = data_shape[axis]
    check("GatherElements", {"x": rand(*data_shape), "i": ints(*index_shape, low=-dim, high=dim, dtype=index_dtype)},
          {"axis": axis}, target=target, tmp_path=tmp_path)


def test_gather_elements_int64_data(target, tmp_path):
    check("GatherElements", {"x": ints(4, 3), "i": ints(4, 3, low=0, high=4, seed=1)}, {"axis": 0},
          target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("data_shape,index_shape,batch_dims", [
    ((4, 5, 6), (3, 2), 0),  # tuples pick rows: slices of 6
    ((4, 5), (2, 3, 2), 0),  # tuples pick elements
    ((3, 4, 5), (3, 2, 1), 1),  # one batch axis
    ((2, 3, 4, 5), (2, 3, 1, 1), 2),  # two batch axes
])
def test_gather_nd(data_shape, index_shape, batch_dims, target, tmp_path):
    q = index_shape[-1]
    dims = data_shape[batch_dims:batch_dims + q]
    indices = np.stack([ints(*index_shape[:-1], low=-d, high=d, seed=j) for j, d in enumerate(dims)], -1)
    check("GatherND", {"x": rand(*data_shape), "i": indices}, {"batch_dims": batch_dims},
          target=target, tmp_path=tmp_path)


# --- ScatterElements / Scatter / ScatterND --------------------------------------------------------
@pytest.mark.parametrize("reduction,tol", [
    ("none", EXACT), ("add", {"rtol": 1e-6, "atol": 1e-6}), ("mul", {"rtol": 1e-6, "atol": 1e-6}),
    ("max", EXACT), ("min", EXACT),
])
def test_scatter_elements_reductions(reduction, tol, target, tmp_path):
    indices = np.array([[0, 2, 1, 0], [2, 2, 0, 1]], np.int64)  # column 1 repeats index 2
    check("ScatterElements", {"x": rand(3, 4), "i": indices, "u": rand(2, 4, seed=1)}, {"axis": 0, "reduction": reduction},
          target=target, tmp_path=tmp_path, tol=tol)


def test_scatter_elements_negative_axis_and_indices(target, tmp_path):
    indices = np.array([[[-1, 0]], [[1, -2]]], np.int32)
    check("ScatterElements", {"x": ints(2, 3, 5), "i": indices, "u": ints(2, 1, 2, seed=1)}, {"axis": -1},
          opset=13, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("opset", [9, 10])
def test_scatter(opset, target, tmp_path):
    indices = np.array([[1, 0, 2], [0, 2, 1]], np.int64)
    check("Scatter", {"x": rand(3, 3), "i": indices, "u": rand(2, 3, seed=1)}, {"axis": 1}, opset=opset,
          target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("reduction,indices,update_shape", [
    ("none", [[1], [3]], (2, 3, 2)),  # slices
    ("add", [[1], [1], [0]], (3, 3, 2)),  # a repeated slice adds up
    ("mul", [[2, 1], [0, 0]], (2, 2)),
    ("max", [[1, 2, 0], [1, 2, 0], [3, 0, 1]], (3,)),  # elements
    ("min", [[-1], [0]], (2, 3, 2)),  # negative index
])
def test_scatter_nd(reduction, indices, update_shape, target, tmp_path):
    tol = EXACT if reduction in ("none", "max", "min") else {"rtol": 1e-6, "atol": 1e-6}
    check("ScatterND", {"x": rand(4, 3, 2), "i": np.array(indices, np.int64), "u": rand(*update_shape, seed=1)},
          {"reduction": reduction}, target=target, tmp_path=tmp_path, tol=tol)


# --- TensorScatter (opset 24: compared with onnx.reference) ----------------------------------------
@pytest.mark.parametrize("mode,axis,write_indices", [
    ("linear", -2, [0, 3]),
    ("circular", -2, [1, 6]),  # batch 1 wraps to the cache's start
    ("linear", 2, None),  # no write_indices: from 0
    ("linear", 1, [1, 0]),
])
def test_tensor_scatter(mode, axis, write_indices, target, tmp_path):
    cache, update = rand(2, 3, 8, 4), rand(2, 3, 8, 4, seed=1)
    update = update[:, :, :3] if axis in (2, -2) else update[:, :2]
    inputs = {"cache": cache, "update": np.ascontiguousarray(update)}
    if write_indices is not None:
        inputs["w"] = np.array(write_indices, np.int64)
    check("TensorScatter", inputs, {"axis": axis, "mode": mode}, opset=24, target=target, tmp_path=tmp_path,
          by_reference=True)


# --- OneHot -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("axis,indices,depth,values_const", [
    (-1, np.array([[1, 9], [-2, 4]], np.int64), 10, False),  # negative index counts from the end
    (0, np.array([[1, 3], [2, 0]], np.int32), np.float32(4), True),
    (1, np.array([0.0, 2.0, -1.0, 7.0], np.float32), 5, False),  # float indices, 7 is out of range
])
def test_one_hot(axis, indices, depth, values_const, target, tmp_path):
    # onnxruntime implements few (indices, values, depth) type triples: compared with onnx.reference
    values = np.array([-2, 5], np.int64) if values_const else np.array([0.5, 3.0], np.float32)
    inputs, inits = {"i": indices}, {"d": np.array(depth)}
    if values_const:
        inits["v"] = values
    else:
        inputs["v"] = values
    check("OneHot", inputs, {"axis": axis, "_order": ["i", "d", "v"]}, opset=11, initializers=inits,
          target=target, tmp_path=tmp_path, by_reference=True)


def test_one_hot_needs_constant_depth(tmp_path):
    model = node_model("OneHot", {"i": np.array([1, 2], np.int64), "d": np.array(4, np.int64)}, {"y": (np.float32, (2, 4))},
                       {"_order": ["i", "d", "v"]}, opset=11, initializers={"v": np.array([0, 1], np.float32)})
    with pytest.raises(NeedsConstantError, match="depth"):
        build_and_run(model, {}, "host", tmp_path)


# --- Trilu / EyeLike ---------------------------------------------------------------------------------
@pytest.mark.parametrize("upper,k,k_runtime,shape", [
    (1, None, False, (4, 5)),
    (0, None, False, (2, 4, 3)),
    (1, -1, False, (3, 5, 5)),
    (0, 2, False, (5, 3)),
    (1, 2, True, (2, 3, 6)),  # k read at run time
    (0, -2, True, (6, 4)),
])
def test_trilu(upper, k, k_runtime, shape, target, tmp_path):
    inputs, inits = {"x": rand(*shape)}, {}
    if k is not None:
        (inputs if k_runtime else inits)["k"] = np.array(k, np.int64)
    check("Trilu", inputs, {"upper": upper}, opset=14, initializers=inits, target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("shape,attrs", [
    ((4, 4), {}),
    ((3, 5), {"k": 2}),
    ((5, 3), {"k": -1, "dtype": onnx.TensorProto.INT64}),
    ((2, 3), {"k": 7}),  # the diagonal misses the matrix: all zeros
])
def test_eye_like(shape, attrs, target, tmp_path):
    check("EyeLike", {"x": rand(*shape)}, attrs, opset=9, target=target, tmp_path=tmp_path)


# --- ReverseSequence -------------------------------------------------------------------------------
@pytest.mark.parametrize("batch_axis,time_axis,shape,lengths", [
    (1, 0, (4, 3), [4, 1, 2]),
    (0, 1, (3, 5, 2, 2), [5, 0, 3]),  # rows of 4 elements move as one
])
def test_reverse_sequence(batch_axis, time_axis, shape, lengths, target, tmp_path):
    check("ReverseSequence", {"x": rand(*shape), "lens": np.array(lengths, np.int64)},
          {"batch_axis": batch_axis, "time_axis": time_axis}, opset=10, target=target, tmp_path=tmp_path)


# --- MaxUnpool ---------------------------------------------------------------------------------------
def _pool_indices(n, c, h, w, k, seed=0):
    """Flat indices over (n, c, h * k, w * k), one per k x k window, as MaxPool's Indices output gives them."""
    rng = np.random.default_rng(seed)
    idx = np.zeros((n, c, h, w), np.int64)
    for b, ch, y, x in np.ndindex(n, c, h, w):
        dy, dx = rng.integers(0, k, 2)
        idx[b, ch, y, x] = ((b * c + ch) * h * k + y * k + dy) * w * k + x * k + dx
    return idx


def test_max_unpool(target, tmp_path):
    check("MaxUnpool", {"x": rand(2, 3, 2, 3), "i": _pool_indices(2, 3, 2, 3, 2)}, {"kernel_shape": [2, 2], "strides": [2, 2]},
          opset=11, target=target, tmp_path=tmp_path)


def test_max_unpool_output_shape(target, tmp_path):
    # a larger output_shape holds the unpooled tensor in its corner, as in onnx's cases (onnxruntime reads the
    # indices over output_shape instead): compared with onnx.reference
    check("MaxUnpool", {"x": rand(1, 2, 2, 2), "i": _pool_indices(1, 2, 2, 2, 2)}, {"kernel_shape": [2, 2], "strides": [2, 2]},
          opset=11, initializers={"s": np.array([1, 2, 5, 6], np.int64)}, outputs={"y": (np.float32, (1, 2, 5, 6))},
          target=target, tmp_path=tmp_path, by_reference=True)


# --- Col2Im ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape,image,block,attrs", [
    ((1, 5, 5), [5, 5], [1, 5], {}),
    ((2, 4, 9), [5, 6], [2, 2], {"strides": [2, 2], "pads": [1, 0, 0, 1]}),
    ((1, 18, 4), [6, 6], [3, 3], {"dilations": [2, 2]}),  # 2 channels
    ((1, 8, 8), [3, 3, 3], [2, 2, 2], {}),  # 3-D image
])
def test_col2im(x_shape, image, block, attrs, target, tmp_path):
    check("Col2Im", {"x": rand(*x_shape)}, attrs, opset=18,
          initializers={"image": np.array(image, np.int64), "block": np.array(block, np.int64)},
          target=target, tmp_path=tmp_path, tol={"rtol": 1e-6, "atol": 1e-6})


# --- CenterCropPad / Compress ------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape,shape,axes", [
    ((6, 7, 3), [4, 4, 3], None),  # crop, odd difference
    ((3, 4, 2), [6, 7, 2], None),  # pad
    ((3, 8, 5), [6, 5], [0, -2]),  # pad one axis, crop another
])
def test_center_crop_pad(x_shape, shape, axes, target, tmp_path):
    attrs = {"axes": axes} if axes else {}
    check("CenterCropPad", {"x": ints(*x_shape)}, attrs, initializers={"shape": np.array(shape, np.int64)},
          target=target, tmp_path=tmp_path)


@pytest.mark.parametrize("shape,condition,axis", [
    ((3, 4), [1, 0, 1], 0),
    ((2, 3, 5), [0, 1, 1, 0, 1], -1),  # a run of two and a single slice
    ((3, 4), [1, 1, 0, 0, 0, 1, 1, 1], None),  # flattened, condition shorter than the data
])
def test_compress(shape, condition, axis, target, tmp_path):
    attrs = {"axis": axis} if axis is not None else {}
    check("Compress", {"x": rand(*shape)}, attrs, opset=11, initializers={"c": np.array(condition, bool)},
          target=target, tmp_path=tmp_path)


def test_compress_needs_constant_condition(tmp_path):
    model = node_model("Compress", {"x": rand(3, 4), "c": np.array([1, 0, 1], bool)}, {"y": (np.float32, (2, 4))},
                       {"axis": 0}, opset=11)
    with pytest.raises(NeedsConstantError, match="condition"):
        build_and_run(model, {}, "host", tmp_path)


# --- value-dependent shapes -------------------------------------------------------------------------
@pytest.mark.parametrize("op,inputs,attrs,outputs", [
    ("NonZero", {"x": np.array([[1, 0], [3, 4]], np.float32)}, {}, ["y"]),
    ("Unique", {"x": np.array([2, 1, 1, 3, 2], np.int64)}, {"sorted": 1}, ["y", "idx", "inv", "counts"]),
    ("NonMaxSuppression", {"boxes": np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 5, 1, 6]]], np.float32),
                           "scores": np.array([[[0.9, 0.8, 0.7]]], np.float32),
                           "max": np.array([2], np.int64), "iou": np.array([0.5], np.float32)}, {}, ["y"]),
])
def test_value_dependent_ops_fold_when_constant(op, inputs, attrs, outputs, tmp_path):
    expected = ReferenceEvaluator(node_model(op, inputs, outputs, attrs, opset=11)).run(None, inputs)
    constant = node_model(op, {}, {n: (e.dtype, e.shape) for n, e in zip(outputs, expected)}, attrs, opset=11,
                          initializers=inputs)
    got, _ = build_and_run(constant, {}, "host", tmp_path)
    for name, want in zip(outputs, expected):
        np.testing.assert_array_equal(got[name], want)


def test_value_dependent_op_refuses_run_time_input(tmp_path):
    model = node_model("NonZero", {"x": rand(2, 3)}, {"y": (np.int64, (2, 6))}, opset=13)
    with pytest.raises(ShapeError, match="depends on input values"):
        build_and_run(model, {}, "host", tmp_path)


# --- float16: moves keep the bits; scatter reductions compute in float32 (the widen_float16 pass) -----
@pytest.mark.parametrize("op,inputs,attrs,opset", [
    ("GatherElements", {"x": rand(3, 4, dtype=np.float16), "i": np.array([[2, 0, 1, 1]], np.int64)}, {"axis": 0}, 13),
    ("Trilu", {"x": rand(3, 4, dtype=np.float16), "k": np.array(1, np.int64)}, {"upper": 0}, 14),
    ("EyeLike", {"x": rand(3, 4)}, {"k": -1, "dtype": onnx.TensorProto.FLOAT16}, 9),
    ("ScatterND", {"x": rand(4, 3, dtype=np.float16), "i": np.array([[1], [1]], np.int64),
                   "u": rand(2, 3, seed=1, dtype=np.float16)}, {"reduction": "add"}, 18),
])
def test_float16(op, inputs, attrs, opset, target, tmp_path):
    # onnxruntime has neither EyeLike nor ScatterND's add on float16: compared with onnx.reference
    check(op, inputs, attrs, opset=opset, target=target, tmp_path=tmp_path, tol={"rtol": 1e-3, "atol": 1e-3},
          by_reference=True)
