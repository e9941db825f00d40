"""The scikit-learn sweep: estimators and pipelines trained on small synthetic data (fixed seeds), exported
with skl2onnx (LightGBM and XGBoost through onnxmltools) with ZipMap off, built by mlcc for each target and
compared with onnxruntime on held-out rows.

    python -m benchmarks.sweep.sklearn_models                  # every model on host, the wasm32 subset too
    python -m benchmarks.sweep.sklearn_models --fast            # the CI subset (tests/models/test_sklearn_sweep.py)
    python -m benchmarks.sweep.sklearn_models --only svc_rbf,rf_clf --targets host
    python -m benchmarks.sweep.sklearn_models --markdown benchmarks/results/sklearn_sweep.md

Needs `pip install -e '.[sweep]'` (scikit-learn, skl2onnx, onnxmltools, lightgbm, xgboost). A converter that is
not installed makes its models "not run", with the reason. Labels must match exactly, scores within
rtol 1e-4, atol 1e-5 (onnxruntime sums in another order).
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from benchmarks.sweep import (
    Result,
    check_builds,
    cli,
    one_line,
    pass_summary,
    select_cases,
    sweep_cases,
    table as tables,
    versions,
)

RTOL, ATOL = 1e-4, 1e-5
SEED = 0
ONNXMLTOOLS_OPSET = 15  # the newest onnxmltools 1.16 converts to
LGBM_LABEL = "built for one row: onnxmltools declares the label output [1]"
ROWS_TRAIN, ROWS_TEST, FEATURES = 200, 32, 8
VERSIONS = ("scikit-learn", "skl2onnx", "onnxmltools", "lightgbm", "xgboost", "onnxruntime", "onnx")


@dataclass
class Case:
    name: str
    converter: str  # skl2onnx, onnxmltools-lightgbm, onnxmltools-xgboost
    make: Callable  # () -> unfitted estimator
    task: str  # "binary", "multiclass" or "regression"
    wasm: bool = False  # also built and run for wasm32
    fast: bool = False  # in the CI subset
    one_row: str = ""  # why the model is built for one row and run row by row (its declared outputs say so)
    bool_flags: bool = False  # the converter passes numpy bools where onnx wants ints: see _int_flags
    missing: bool = False  # some test values are NaN (the trees' missing-value branches)


def _cases() -> list[Case]:
    from sklearn import ensemble, linear_model, neighbors, pipeline, preprocessing, svm, tree

    def pipe(*steps):
        return lambda: pipeline.make_pipeline(*(s() for s in steps))

    def lgbm(kind):
        def make():
            import lightgbm
            return getattr(lightgbm, kind)(n_estimators=20, num_leaves=15, random_state=SEED, verbose=-1)
        return make

    def xgb(kind):
        def make():
            import xgboost
            return getattr(xgboost, kind)(n_estimators=20, max_depth=4, random_state=SEED)
        return make

    return [
        Case("dt_clf", "skl2onnx", lambda: tree.DecisionTreeClassifier(max_depth=6, random_state=SEED), "multiclass",
             wasm=True, fast=True),
        Case("dt_reg", "skl2onnx", lambda: tree.DecisionTreeRegressor(max_depth=6, random_state=SEED), "regression"),
        Case("rf_clf", "skl2onnx", lambda: ensemble.RandomForestClassifier(20, max_depth=6, random_state=SEED),
             "multiclass", wasm=True),
        Case("rf_clf_binary", "skl2onnx", lambda: ensemble.RandomForestClassifier(10, max_depth=5, random_state=SEED),
             "binary", fast=True),
        Case("rf_reg", "skl2onnx", lambda: ensemble.RandomForestRegressor(20, max_depth=6, random_state=SEED),
             "regression"),
        Case("extra_trees_clf", "skl2onnx", lambda: ensemble.ExtraTreesClassifier(20, max_depth=6, random_state=SEED),
             "multiclass"),
        Case("extra_trees_reg", "skl2onnx", lambda: ensemble.ExtraTreesRegressor(20, max_depth=6, random_state=SEED),
             "regression"),
        Case("gb_clf", "skl2onnx", lambda: ensemble.GradientBoostingClassifier(n_estimators=20, random_state=SEED),
             "multiclass"),
        Case("gb_clf_binary", "skl2onnx", lambda: ensemble.GradientBoostingClassifier(n_estimators=20, random_state=SEED),
             "binary", wasm=True, fast=True),
        Case("gb_reg", "skl2onnx", lambda: ensemble.GradientBoostingRegressor(n_estimators=20, random_state=SEED),
             "regression", wasm=True),
        Case("hgb_clf", "skl2onnx", lambda: ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=SEED),
             "multiclass", bool_flags=True, missing=True),
        Case("hgb_reg", "skl2onnx", lambda: ensemble.HistGradientBoostingRegressor(max_iter=20, random_state=SEED),
             "regression", bool_flags=True),
        Case("logreg", "skl2onnx", lambda: linear_model.LogisticRegression(max_iter=500), "multiclass", wasm=True,
             fast=True),
        Case("logreg_binary", "skl2onnx", lambda: linear_model.LogisticRegression(max_iter=500), "binary"),
        Case("linreg", "skl2onnx", linear_model.LinearRegression, "regression", fast=True),
        Case("ridge", "skl2onnx", linear_model.Ridge, "regression"),
        Case("svc_rbf", "skl2onnx", lambda: svm.SVC(kernel="rbf"), "multiclass", wasm=True),
        Case("svc_linear", "skl2onnx", lambda: svm.SVC(kernel="linear"), "binary"),
        Case("svc_poly_proba", "skl2onnx", lambda: svm.SVC(kernel="poly", probability=True, random_state=SEED),
             "multiclass"),
        Case("svr", "skl2onnx", svm.SVR, "regression"),
        Case("linear_svc", "skl2onnx", lambda: svm.LinearSVC(random_state=SEED), "multiclass"),
        Case("scaler_svc", "skl2onnx", pipe(preprocessing.StandardScaler, svm.SVC), "multiclass", wasm=True, fast=True),
        Case("minmax_logreg", "skl2onnx", pipe(preprocessing.MinMaxScaler, lambda: linear_model.LogisticRegression(max_iter=500)),
             "binary"),
        Case("normalizer_ridge", "skl2onnx", pipe(preprocessing.Normalizer, linear_model.Ridge), "regression"),
        Case("knn_clf", "skl2onnx", lambda: neighbors.KNeighborsClassifier(5), "multiclass"),
        Case("knn_reg", "skl2onnx", lambda: neighbors.KNeighborsRegressor(5), "regression"),
        Case("lgbm_clf", "onnxmltools-lightgbm", lgbm("LGBMClassifier"), "multiclass", wasm=True, one_row=LGBM_LABEL),
        Case("lgbm_clf_binary", "onnxmltools-lightgbm", lgbm("LGBMClassifier"), "binary", one_row=LGBM_LABEL),
        Case("lgbm_reg", "onnxmltools-lightgbm", lgbm("LGBMRegressor"), "regression", missing=True),
        Case("xgb_clf", "onnxmltools-xgboost", xgb("XGBClassifier"), "multiclass", wasm=True),
        Case("xgb_clf_binary", "onnxmltools-xgboost", xgb("XGBClassifier"), "binary", missing=True),
        Case("xgb_reg", "onnxmltools-xgboost", xgb("XGBRegressor"), "regression"),
    ]


def data(task: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train X, train y, test X (float32), fixed seed."""
    from sklearn.datasets import make_classification, make_regression

    n = ROWS_TRAIN + ROWS_TEST
    if task == "regression":
        x, y = make_regression(n, FEATURES, n_informative=5, noise=5.0, random_state=SEED)
    else:
        x, y = make_classification(n, FEATURES, n_informative=5, n_classes=2 if task == "binary" else 3,
                                   random_state=SEED)
    x = x.astype(np.float32)
    return x[:ROWS_TRAIN], y[:ROWS_TRAIN], x[ROWS_TRAIN:]


BOOL_FLAGS = "exported with skl2onnx's missing-value flags made ints (skl2onnx 1.20 passes numpy bools, onnx refuses them)"


@contextmanager
def _int_flags():
    """skl2onnx 1.20 builds HistGradientBoosting's nodes_missing_value_tracks_true from numpy bools, which
    onnx.helper refuses ("Expected an int, got a boolean"); hand it ints instead. The model is unchanged."""
    from skl2onnx.common import _container

    make_node = _container.make_node

    def ints(value):
        if isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value):
            return [int(v) for v in value]
        return value

    _container.make_node = lambda *args, **attrs: make_node(*args, **{k: ints(v) for k, v in attrs.items()})
    try:
        yield
    finally:
        _container.make_node = make_node


def export(case: Case, estimator, x: np.ndarray):
    """The fitted estimator as ONNX, probabilities as a tensor (no ZipMap)."""
    from sklearn.base import is_classifier

    if case.bool_flags:
        with _int_flags():
            return export(replace(case, bool_flags=False), estimator, x)

    if case.converter == "skl2onnx":
        from skl2onnx import to_onnx

        final = estimator.steps[-1][1] if hasattr(estimator, "steps") else estimator
        opsets = {"": 17, "ai.onnx.ml": 3}
        if is_classifier(final):
            try:
                return to_onnx(estimator, x[:1], options={id(final): {"zipmap": False}}, target_opset=opsets)
            except NameError as exc:  # a classifier without probabilities (LinearSVC) takes no zipmap option
                if "zipmap" not in str(exc):
                    raise
        return to_onnx(estimator, x[:1], target_opset=opsets)
    from onnxmltools.convert import convert_lightgbm, convert_xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    types = [("X", FloatTensorType([None, x.shape[1]]))]
    if case.converter == "onnxmltools-lightgbm":
        return convert_lightgbm(estimator, initial_types=types, zipmap=False, target_opset=ONNXMLTOOLS_OPSET)
    return convert_xgboost(estimator, initial_types=types, target_opset=ONNXMLTOOLS_OPSET)


def run_case(case: Case, targets: list[str], work: Path) -> list[Result]:
    """Train, export, build for each target, run, compare; one Result per target."""
    import onnx

    from mlcc.verify import reference_outputs

    results = [Result(case.name, case.converter, t) for t in targets]
    try:
        x_train, y_train, x_test = data(case.task)
        if case.missing:
            x_test = x_test.copy()
            x_test[::3, 1] = np.nan
            x_test[1::4, 4] = np.nan
        estimator = case.make()
        estimator.fit(x_train, y_train)
        model = export(case, estimator, x_train)
    except ImportError as exc:
        for r in results:
            r.reason = f"converter not installed: {exc.name or exc}"
        return results
    except Exception as exc:  # the converter's own failure: reported, not ours to fix
        for r in results:
            r.status, r.reason = "export failed", one_line(exc)
        return results
    ops = sorted({n.op_type for n in model.graph.node})
    path = work / f"{case.name}.onnx"
    onnx.save(model, str(path))
    input_name = model.graph.input[0].name
    feeds = {input_name: x_test}
    names = [o.name for o in model.graph.output]
    expected, _ = reference_outputs(model, feeds, names)
    rows = 1 if case.one_row else len(x_test)
    note = "; ".join(n for n in (case.one_row, BOOL_FLAGS if case.bool_flags else "",
                                 "a third of the rows hold NaNs" if case.missing else "") if n)
    for r in results:
        r.ops = ops

    def run(loaded):
        parts = [loaded.run({input_name: x_test[i:i + rows]}) for i in range(0, len(x_test), rows)]
        return {name: np.concatenate([part[name] for part in parts]) for name in names}

    return check_builds(path, results, expected, work, run, RTOL, ATOL, note=note,
                        build_args=dict(shapes={input_name: (rows, *x_test.shape[1:])}))


def table(results: list[Result]) -> str:
    return tables(results, source="converter", ops_listed=True)


def summary(results: list[Result]) -> str:
    return pass_summary(results, "the models that export")


def select(fast: bool = False, only: list[str] | None = None) -> list[Case]:
    return select_cases(_cases(), fast, only)


def sweep(cases: list[Case], targets: list[str], work: Path, progress=None) -> list[Result]:
    return sweep_cases([(c, c.converter) for c in cases], lambda case, _, wanted: run_case(case, wanted, work),
                       targets, progress)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sweep.sklearn_models", description=__doc__.split("\n\n")[0])
    cli.add_target_arguments(p)
    cli.add_case_arguments(p, "models and builds")
    args = p.parse_args(argv)
    cases = select(args.fast, cli.case_names(args.only))
    with cli.work_folder(args.work) as work:
        results = sweep(cases, cli.names(args.targets), work, progress=lambda line: print(line, file=sys.stderr, flush=True))
    text = f"{table(results)}\n\n{summary(results)}\n\nVersions: {versions(VERSIONS)}\n"
    return cli.finish(results, text, args.markdown, "scikit-learn sweep",
                      f"python -m benchmarks.sweep.sklearn_models --markdown {args.markdown}")


if __name__ == "__main__":
    sys.exit(main())
