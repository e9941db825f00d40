"""Golden tests of the ai.onnx.ml linear and SVM models and preprocessing ops against onnxruntime, on every
target: LinearRegressor, LinearClassifier, SVMRegressor, SVMClassifier (linear mode; one-vs-one with each
kernel, with and without Platt probabilities), Normalizer, Scaler, Imputer; and the one-line errors for ZipMap
and string labels."""

import numpy as np
import onnx
import pytest

from mlcc.errors import UnsupportedError
from tests.golden import build_and_run, check_model, node_model

ML = "ai.onnx.ml"
ROWS, FEATURES = 12, 5


def ml_model(op, x, outputs, attrs, opset=1):
    m = node_model(op, {"x": x}, outputs, attrs, opset=opset, domain=ML)
    m.opset_import.append(onnx.helper.make_opsetid("", 17))
    return m


def data(dtype=np.float32, seed=0, shape=(ROWS, FEATURES)):
    x = np.random.default_rng(seed).normal(size=shape) * 2
    return x.round().astype(dtype) if np.dtype(dtype).kind == "i" else x.astype(dtype)


def uniform(n, seed, low=-1.0, high=1.0):
    return np.random.default_rng(seed).uniform(low, high, n).round(4).tolist()


@pytest.mark.parametrize("targets,post", [(1, "NONE"), (3, "SOFTMAX"), (2, "LOGISTIC")])
def test_linear_regressor(targets, post, target, tmp_path):
    x = data()  # onnxruntime takes float only
    attrs = {"coefficients": uniform(targets * FEATURES, 1), "intercepts": uniform(targets, 2), "targets": targets,
             "post_transform": post}
    check_model(ml_model("LinearRegressor", x, {"y": (np.float32, (ROWS, targets))}, attrs), {"x": x}, target,
                tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("classes,scores,post,dtype", [
    (3, 3, "LOGISTIC", np.float32), (4, 4, "SOFTMAX_ZERO", np.float64), (2, 1, "NONE", np.float32),
    (2, 1, "LOGISTIC", np.int32), (2, 2, "SOFTMAX", np.float32)])
def test_linear_classifier(classes, scores, post, dtype, target, tmp_path):
    x = data(dtype) / (8 if post == "PROBIT" else 1)
    attrs = {"coefficients": uniform(scores * FEATURES, 3, *((0, 0.05) if post == "PROBIT" else (-1, 1))),
             "intercepts": uniform(scores, 4, *((0.3, 0.6) if post == "PROBIT" else (-1, 1))),
             "classlabels_ints": [5, 2, 9, 1][:classes], "post_transform": post}
    outputs = {"y": (np.int64, (ROWS,)), "z": (np.float32, (ROWS, 2 if scores == 1 else scores))}
    check_model(ml_model("LinearClassifier", x.astype(dtype), outputs, attrs), {"x": x.astype(dtype)}, target, tmp_path,
                rtol=1e-5, atol=1e-5)


def svm_attrs(kernel, classes, per_class, seed):
    vectors = sum(per_class)
    return {"kernel_type": kernel, "kernel_params": [0.3, 0.5, 3.0], "vectors_per_class": per_class,
            "support_vectors": uniform(vectors * FEATURES, seed, -2, 2),
            "coefficients": uniform((classes - 1) * vectors, seed + 1),
            "rho": uniform(classes * (classes - 1) // 2, seed + 2), "classlabels_ints": [3, 8, 1, 6][:classes]}


@pytest.mark.parametrize("kernel,classes,proba,post", [
    ("RBF", 3, False, "NONE"), ("POLY", 2, False, "NONE"), ("SIGMOID", 2, False, "LOGISTIC"),
    ("RBF", 4, True, "NONE"), ("LINEAR", 2, True, "NONE"), ("POLY", 3, True, "SOFTMAX")])
def test_svm_classifier(kernel, classes, proba, post, target, tmp_path):
    x = data()
    attrs = {**svm_attrs(kernel, classes, [3, 2, 4, 1][:classes], seed=classes), "post_transform": post}
    pairs = classes * (classes - 1) // 2
    if proba:
        attrs.update(prob_a=uniform(pairs, 7, -3, -1), prob_b=uniform(pairs, 8, -0.5, 0.5))
    scores = classes if proba else pairs if classes > 2 else 2
    outputs = {"y": (np.int64, (ROWS,)), "z": (np.float32, (ROWS, scores))}
    check_model(ml_model("SVMClassifier", x, outputs, attrs), {"x": x}, target, tmp_path, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("classes,post", [(2, "NONE"), (3, "SOFTMAX")])
def test_svm_classifier_linear_mode(classes, post, target, tmp_path):
    x = data(np.float64)
    attrs = {"coefficients": uniform(classes * FEATURES, 9), "rho": [0.25], "classlabels_ints": [4, 0, 2][:classes],
             "post_transform": post, "kernel_params": [0.0, 0.0, 0.0]}
    outputs = {"y": (np.int64, (ROWS,)), "z": (np.float32, (ROWS, classes))}
    check_model(ml_model("SVMClassifier", x, outputs, attrs), {"x": x}, target, tmp_path, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kernel,supports,one_class", [("LINEAR", 0, 0), ("RBF", 6, 0), ("POLY", 4, 1)])
def test_svm_regressor(kernel, supports, one_class, target, tmp_path):
    x = data()
    attrs = {"kernel_type": kernel, "kernel_params": [0.2, 1.0, 2.0], "n_supports": supports,
             "support_vectors": uniform(supports * FEATURES, 10, -2, 2) if supports else [],
             "coefficients": uniform(supports or FEATURES, 11), "rho": [0.1], "one_class": one_class}
    if not supports:
        del attrs["support_vectors"]
    check_model(ml_model("SVMRegressor", x, {"y": (np.float32, (ROWS, 1))}, attrs), {"x": x}, target, tmp_path,
                rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("norm,dtype", [("MAX", np.float32), ("L1", np.int64), ("L2", np.float64), ("L2", np.float32)])
def test_normalizer(norm, dtype, target, tmp_path):
    x = data(dtype)
    x[3] = 0  # a row whose norm is 0 is copied
    check_model(ml_model("Normalizer", x, {"y": (np.float32, x.shape)}, {"norm": norm}), {"x": x}, target, tmp_path,
                rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("offset,scale,dtype", [([0.5], [2.0], np.float32), (uniform(FEATURES, 12), uniform(FEATURES, 13), np.int64),
                                               (uniform(FEATURES, 14), uniform(FEATURES, 15), np.float64)])
def test_scaler(offset, scale, dtype, target, tmp_path):
    x = data(dtype)
    check_model(ml_model("Scaler", x, {"y": (np.float32, x.shape)}, {"offset": offset, "scale": scale}), {"x": x},
                target, tmp_path, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype,attrs", [
    (np.float32, {"imputed_value_floats": uniform(FEATURES, 15), "replaced_value_float": float("nan")}),
    (np.float32, {"imputed_value_floats": [7.5], "replaced_value_float": 1.0}),
    (np.int64, {"imputed_value_int64s": [1, 2, 3, 4, 5], "replaced_value_int64": -1})])
def test_imputer(dtype, attrs, target, tmp_path):
    x = data(dtype)
    if dtype == np.float32:
        x[::3, 2] = np.nan
        x[1::4, 0] = 1.0
    check_model(ml_model("Imputer", x, {"y": (dtype, x.shape)}, attrs), {"x": x}, target, tmp_path, rtol=0, atol=0)


def test_zipmap_error_names_the_export_option(tmp_path):
    x = data()
    m = ml_model("LinearClassifier", x, {"y": (np.int64, (ROWS,)), "z": (np.float32, (ROWS, 3))},
                 {"coefficients": uniform(3 * FEATURES, 16), "intercepts": [0.0, 0.0, 0.0], "classlabels_ints": [0, 1, 2]})
    zipmap = onnx.helper.make_node("ZipMap", ["z"], ["maps"], domain=ML, classlabels_int64s=[0, 1, 2])
    m.graph.node.append(zipmap)
    maps = onnx.helper.make_value_info("maps", onnx.helper.make_sequence_type_proto(onnx.helper.make_map_type_proto(
        onnx.TensorProto.INT64, onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, []))))
    m.graph.output.append(maps)
    with pytest.raises(UnsupportedError, match=r"ZipMap.*options=\{id\(model\): \{'zipmap': False\}\}"):
        build_and_run(m, {"x": x}, "host", tmp_path)


def test_string_labels_error(tmp_path):
    x = data()
    m = ml_model("LinearClassifier", x, {"y": (np.int64, (ROWS,)), "z": (np.float32, (ROWS, 2))},
                 {"coefficients": uniform(2 * FEATURES, 17), "intercepts": [0.0, 0.0], "classlabels_strings": ["a", "b"]})
    m.graph.output[0].type.tensor_type.elem_type = onnx.TensorProto.STRING
    with pytest.raises(UnsupportedError, match="string tensors are not supported; train on integer class labels"):
        build_and_run(m, {"x": x}, "host", tmp_path)


@pytest.mark.parametrize("dtype,zeros", [(np.int64, 1), (np.float32, 1), (np.float64, 0)])
def test_one_hot_encoder(dtype, zeros, target, tmp_path):
    x = np.array([[3, 7, -1], [0, 3, 3], [7, 2, 5], [5, 0, 7]], dtype)
    if zeros:
        x[2, 1] = 9  # an unknown category: a row of zeros (with zeros=0 onnxruntime fails the run)
    attrs = {"cats_int64s": [7, 3, 0, 5, -1, 2], "zeros": zeros}
    check_model(ml_model("OneHotEncoder", x, {"y": (np.float32, (*x.shape, 6))}, attrs), {"x": x}, target, tmp_path,
                rtol=0, atol=0)


@pytest.mark.parametrize("x_dtype,keys,values,default,opset", [
    (np.int64, {"keys_int64s": [5, -2, 9, 0]}, {"values_int64s": [1, 2, 3, 4]}, {"default_int64": -7}, 2),
    (np.int64, {"keys_int64s": [5, -2, 9, 0]}, {"values_floats": [0.5, 1.5, -2.0, 8.0]}, {"default_float": 9.5}, 2),
    (np.float32, {"keys_floats": [0.5, -1.0, 2.0, float("nan")]}, {"values_int64s": [10, 20, 30, 40]}, {}, 2),
    (np.int64, {"keys_tensor": np.array([5, 9, -2])}, {"values_tensor": np.array([7.5, 8.0, 9.25], np.float32)},
     {"default_tensor": np.array([-5.0], np.float32)}, 4),
    (np.float32, {"keys_tensor": np.array([1.5, float("nan"), 4.0], np.float32)},
     {"values_tensor": np.array([7, 8, 9])}, {"default_tensor": np.array([-5])}, 4),
])
def test_label_encoder(x_dtype, keys, values, default, opset, target, tmp_path):
    x = np.array([5, 0, -2, 3, 9, 9, 0.5, -1.0, 2.0, 1.5, -3.0, 4.0, float("nan"), 7.25])
    x = x[~np.isnan(x)].astype(x_dtype) if x_dtype == np.int64 else x.astype(x_dtype)
    attrs = {**keys, **values, **default}
    for name, value in list(attrs.items()):
        if isinstance(value, np.ndarray):
            attrs[name] = onnx.numpy_helper.from_array(value, name)
    out_dtype = next(np.asarray(v).dtype if not isinstance(v, list) else (np.int64 if "int64" in k else np.float32)
                     for k, v in {**values}.items())
    check_model(ml_model("LabelEncoder", x, {"y": (out_dtype, x.shape)}, attrs, opset=opset), {"x": x}, target,
                tmp_path, rtol=0, atol=0)


def test_feature_vectorizer(target, tmp_path):
    a, b, c = data(np.float32, 1, (ROWS, 3)), data(np.float32, 2, (ROWS, 4)), data(np.float32, 3, (ROWS, 2))
    m = node_model("FeatureVectorizer", {"a": a, "b": b, "c": c}, {"y": (np.float32, (ROWS, 8))},
                   {"inputdimensions": [3, 2, 3]}, opset=1, domain=ML)  # b truncated to 2, c padded to 3
    m.opset_import.append(onnx.helper.make_opsetid("", 17))
    check_model(m, {"a": a, "b": b, "c": c}, target, tmp_path, rtol=0, atol=0)


def test_string_input_error(tmp_path):
    node = onnx.helper.make_node("LabelEncoder", ["x"], ["y"], domain=ML, keys_strings=["a", "b"], values_int64s=[1, 2])
    graph = onnx.helper.make_graph([node], "strings", [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.STRING, [2])],
                                   [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.INT64, [2])])
    m = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid(ML, 2), onnx.helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedError, match="element type STRING is not supported: .*OrdinalEncoder"):
        build_and_run(m, {}, "host", tmp_path)
