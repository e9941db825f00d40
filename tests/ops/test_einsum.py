"""Golden tests of Einsum against onnxruntime, on every target."""

import numpy as np
import pytest

from tests.golden import check_model, node_model, rand

CASES = [
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ij", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("...ii->...i", [(2, 3, 4, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("i,i", [(7,), (7,)]),
    ("i,j->ij", [(3,), (5,)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("bij, bjk -> bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 8), (1, 2, 5, 8)]),
    ("...ij,...jk->...ik", [(2, 5, 3, 4), (2, 5, 4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bik,k->bi", [(2, 3, 4), (4,)]),
]


@pytest.mark.parametrize("equation,shapes", CASES)
def test_einsum(equation, shapes, target, tmp_path):
    feeds = {f"x{i}": rand(*s, seed=i) for i, s in enumerate(shapes)}
    shape = np.einsum(equation.replace(" ", ""), *feeds.values()).shape  # onnx's inference misses broadcasts
    model = node_model("Einsum", feeds, {"y": (np.float32, shape)}, {"equation": equation}, opset=12)
    check_model(model, feeds, target, tmp_path, rtol=1e-5, atol=1e-5)


def test_einsum_broadcast_ellipsis(target, tmp_path):
    # onnxruntime refuses ellipses of different ranks or with size-1 dims that broadcast: compared with numpy
    feeds = {"a": rand(2, 1, 3, 4, seed=1), "b": rand(5, 4, 2, seed=2)}
    expected = np.einsum("...ij,...jk->...ik", feeds["a"], feeds["b"])
    model = node_model("Einsum", feeds, {"y": (np.float32, expected.shape)}, {"equation": "...ij,...jk->...ik"}, opset=12)
    check_model(model, feeds, target, tmp_path, rtol=1e-5, atol=1e-5, expected={"y": expected})


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64])
def test_einsum_types(dtype, target, tmp_path):
    feeds = {"a": np.random.default_rng(1).integers(-5, 5, (2, 3, 4)).astype(dtype),
             "b": np.random.default_rng(2).integers(-5, 5, (2, 4, 3)).astype(dtype)}
    model = node_model("Einsum", feeds, ["y"], {"equation": "bij,bjk->bik"}, opset=12)
    check_model(model, feeds, target, tmp_path, rtol=1e-12, atol=0)


def test_einsum_scalar(target, tmp_path):
    feeds = {"x": np.array(2.5, np.float32)}
    check_model(node_model("Einsum", feeds, ["y"], {"equation": "->"}, opset=12), feeds, target, tmp_path)


def test_einsum_bad_equation_is_an_error(tmp_path):
    from mlcc.errors import ShapeError
    from tests.golden import build_and_run

    feeds = {"x": rand(3, 4)}
    model = node_model("Einsum", feeds, {"y": (np.float32, (3,))}, {"equation": "ijk->i"}, opset=12)
    with pytest.raises(ShapeError, match="einsum term"):
        build_and_run(model, feeds, "host", tmp_path)
