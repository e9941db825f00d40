"""Golden testing: build a model with mlcc for a target, run it, compare with onnxruntime.

`check_model(model, feeds, target, tmp_path)` is the one way tests compare numbers; tolerances are stated
per call. `node_model(...)` makes a one-node model for per-op tests.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from mlcc import runners
from mlcc.pipeline import BuildOptions, build
from mlcc.verify import compare, reference_outputs

TARGETS = ["host", "wasm32"]  # the default of pytest's --targets


def split_target(target: str) -> tuple[str, str | None]:
    """A test target is "NAME" or "NAME@RUNNER": build for NAME, run on RUNNER (default: NAME's own)."""
    name, _, runner = target.partition("@")
    return name, runner or None


def node_model(op_type: str, inputs: dict, outputs: list[str] | dict, attrs: dict | None = None,
               opset: int = 17, initializers: dict | None = None, domain: str = "") -> onnx.ModelProto:
    """A one-node model. inputs: name -> example array (graph input); initializers: name -> array
    (constants); outputs: names (types left to inference) or name -> (np dtype, shape).
    Input order of the node: inputs' keys then initializers' keys, unless attrs has `_order`."""
    attrs = dict(attrs or {})
    initializers = initializers or {}
    order = attrs.pop("_order", [*inputs, *initializers])
    node = helper.make_node(op_type, order, list(outputs), name=f"{op_type.lower()}_node", domain=domain or None, **attrs)
    graph_inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.asarray(a).dtype), np.asarray(a).shape)
                    for n, a in inputs.items()]
    if isinstance(outputs, dict):
        graph_outputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(d)), s) for n, (d, s) in outputs.items()]
    else:
        graph_outputs = [helper.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None) for n in outputs]
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers.items()]
    graph = helper.make_graph([node], f"{op_type.lower()}_test", graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    model.ir_version = 8 if opset < 21 else 10
    return onnx.shape_inference.infer_shapes(model) if not isinstance(outputs, dict) else model


def build_and_run(model: onnx.ModelProto, feeds: dict, target: str, tmp_path: Path, **options) -> tuple[dict, dict]:
    if target == "host" and os.environ.get("MLCC_GOLDEN_SANITIZE") and not options:
        from tests.robustness.harness import sanitized_outputs

        return sanitized_outputs(model, feeds, tmp_path / "sanitized")  # scripts/sanitize_golden.sh
    name, runner = split_target(target)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    out_dir, report = build(path, BuildOptions(target=name, out_dir=tmp_path / f"out-{name}", **options))
    return runners.load(out_dir, runner=runner).run(feeds), report


def check_model(model: onnx.ModelProto, feeds: dict, target: str, tmp_path: Path,
                rtol: float = 1e-4, atol: float = 1e-5, expected: dict | None = None, **options) -> dict:
    """Build+run with mlcc on `target` and assert every output matches onnxruntime (or `expected`)."""
    got, report = build_and_run(model, feeds, target, tmp_path, **options)
    names = [o["name"] for o in report["outputs"]]
    if expected is None:
        expected, _ = reference_outputs(model, feeds, names)
    for name in names:
        result = compare(got[name], expected[name], rtol, atol)
        assert got[name].shape == np.asarray(expected[name]).shape, f"{name}: shape {got[name].shape} != {np.asarray(expected[name]).shape}"
        assert result.ok, f"{name} on {target}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}"
    return report


def shared_model(tmp_path_factory, name: str, write) -> Path:
    """The model `write(path)` saves (an exporter's), made once per test session: the xdist workers share it
    through their common temp folder, weights inline (an exporter may write them aside). One worker exports;
    a worker asking meanwhile waits for its file instead of exporting the same model again."""
    shared = tmp_path_factory.getbasetemp().parent / "shared_models"
    shared.mkdir(exist_ok=True)
    path = shared / f"{name}.onnx"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            staged = tmp_path_factory.mktemp(name) / f"{name}.onnx"
            write(staged)
            whole = shared / f"{name}.{os.getpid()}.onnx"
            onnx.save(onnx.load(str(staged)), str(whole))
            os.replace(whole, path)
    return path


def check_sizes(model: onnx.ModelProto, feeds_at, sizes: list, target: str, tmp_path: Path,
                rtol: float = 1e-4, atol: float = 1e-5, refused: tuple | None = None, arena_as_static: bool = False,
                **options) -> dict:
    """One build with run-time dimensions (options `dims` / `shapes` holding MIN..MAX ranges as tuples), run at
    each of `sizes` (feeds_at(size) makes the inputs) and compared with onnxruntime at each. `refused` =
    (size, message): a size out of range the artifact must refuse with that message. `arena_as_static`: the
    arena must be a static build's at the maximum of every range (not so where the static build folds what
    varies at run time, e.g. a stored mask cut to the size). Returns the report."""
    from mlcc.errors import RunError
    from mlcc.pipeline import compile_model

    name, runner = split_target(target)
    path = tmp_path / "model.onnx"
    onnx.save(model, str(path))
    out_dir, report = build(path, BuildOptions(target=name, out_dir=tmp_path / f"out-{name}", **options))
    if arena_as_static:
        def maximum(extent):
            return extent[1] if isinstance(extent, tuple) else extent

        at_maximum = {}
        if "dims" in options:
            at_maximum["dims"] = {dim: maximum(extent) for dim, extent in options["dims"].items()}
        if "shapes" in options:
            at_maximum["shapes"] = {input: tuple(map(maximum, shape)) for input, shape in options["shapes"].items()}
        # a static build may keep intermediates in its outputs' buffers (plan/output_room.py), which a
        # run-time-sized output does not offer: equal to the static build with that room or without it
        arenas = {compile_model(path, BuildOptions(target=name, compile=False, outputs_overlap_inputs=overlap,
                                                   **{**options, **at_maximum})).plan.arena_bytes
                  for overlap in (False, True)}
        assert report["arena_bytes"] in arenas, \
            f"arena {report['arena_bytes']:,} B, a static build's at the maximum {' or '.join(f'{a:,}' for a in sorted(arenas))} B"
    loaded = runners.load(out_dir, runner=runner)
    if refused is not None:
        size, message = refused
        try:
            loaded.run(feeds_at(size))
        except RunError as error:
            assert message in str(error), str(error)
        else:
            raise AssertionError(f"size {size} out of range was not refused")
    names = [o["name"] for o in report["outputs"]]
    for size in sizes:
        feeds = feeds_at(size)
        got = loaded.run(feeds)
        expected, _ = reference_outputs(model, feeds, names)
        for output in names:
            want = np.asarray(expected[output])
            assert got[output].shape == want.shape, f"{output} at {size}: shape {got[output].shape} != {want.shape}"
            result = compare(got[output], want, rtol, atol)
            assert result.ok, f"{output} at {size} on {target}: max abs err {result.max_abs:.3g}, max rel err {result.max_rel:.3g}"
    return report


def rand(*shape, seed: int = 0, dtype=np.float32, low: float | None = None, high: float | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed + 1000 * len(shape) + sum(shape))
    if low is not None:
        return rng.uniform(low, high, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
