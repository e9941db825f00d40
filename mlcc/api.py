"""The Python API: `mlcc.compile(model, target=...)` builds a model and returns it loaded, ready to call with
numpy arrays; `mlcc.load(folder)` loads what `mlcc build` wrote. Both give a runners.LoadedModel (the same
objects `mlcc run` uses), which owns its arena and the runtime state of its target (a loaded library, a wasm
instance).
"""

from __future__ import annotations

import dataclasses
import tempfile
import weakref
from pathlib import Path

from . import runners
from .errors import UsageError
from .pipeline import BuildOptions, build


def load(folder: str | Path, runner: str | None = None, threads: int = 1) -> runners.LoadedModel:
    """The model built in `folder`, on its target's runner or on `runner` (e.g. "node" for wasm32); threads > 1
    runs NAME_run_parallel on the runtime's thread pool (host; a wasm32-threads build's workers on node)."""
    return runners.load(folder, runner=runner, threads=threads)


_OPTIONS = {f.name for f in dataclasses.fields(BuildOptions)} - {"target", "out_dir", "compile", "progress", "after_pass"}


def compile(model, target: str = "host", out_dir: str | Path | None = None, runner: str | None = None,
            **options) -> runners.LoadedModel:
    """Build `model` (an .onnx path or an onnx.ModelProto) for `target` and load it. Without `out_dir` the
    build lives in a temporary folder removed with the returned object. `options` are BuildOptions fields:
    name, shapes={input: dims}, dims={symbol: n}, frozen={input: values}, opt_level, disabled_passes,
    optimize_for ("size"/"speed"), arena_limit, outputs_overlap_inputs."""
    unknown = set(options) - _OPTIONS
    if unknown:
        raise UsageError(f"mlcc.compile: unknown option(s) {', '.join(sorted(unknown))}; options are: "
                         f"{', '.join(sorted(_OPTIONS))}")
    scratch = tempfile.TemporaryDirectory(prefix="mlcc-model-")
    try:
        path = model
        if not isinstance(model, (str, Path)):  # an in-memory ModelProto
            import onnx

            path = Path(scratch.name) / f"{options.get('name') or 'model'}.onnx"
            onnx.save(model, str(path))
        folder = Path(out_dir) if out_dir is not None else Path(scratch.name) / "build"
        if "disabled_passes" in options:
            options["disabled_passes"] = tuple(options["disabled_passes"])
        built, _ = build(path, BuildOptions(target=target, out_dir=folder, **options))
        loaded = runners.load(built, runner=runner)
    except BaseException:
        scratch.cleanup()
        raise
    weakref.finalize(loaded, scratch.cleanup)  # the library or module is loaded: its files may go with it
    return loaded
