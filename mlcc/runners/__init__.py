"""Runners execute a built model on its target: `load(out_dir)` gives a LoadedModel whose `run` takes and
returns numpy arrays keyed by ONNX names. Each runner module registers itself under the name a target's
`runner` field uses.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import RunError

_RUNNERS: dict[str, Callable] = {}


def register(name: str):
    def wrap(factory):
        _RUNNERS[name] = factory
        return factory
    return wrap


class LoadedModel:
    """Base: checks inputs against report.json and allocates outputs; subclasses implement `_invoke`."""

    def __init__(self, out_dir: Path, report: dict):
        self.out_dir, self.report = out_dir, report
        self.inputs = report["inputs"]
        self.outputs = report["outputs"]

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        arrays = []
        for spec in self.inputs:
            if spec["name"] not in feeds:
                raise RunError(f"missing input {spec['name']!r}; the model's inputs are: {', '.join(i['name'] for i in self.inputs)}")
            array = np.asarray(feeds[spec["name"]])
            if tuple(array.shape) != tuple(spec["shape"]):
                raise RunError(f"input {spec['name']!r} has shape {list(array.shape)}, the model was built for {spec['shape']}")
            arrays.append(np.ascontiguousarray(array, dtype=spec["dtype"]))
        extra = set(feeds) - {i["name"] for i in self.inputs}
        if extra:
            raise RunError(f"unknown input(s) {sorted(extra)}; the model's inputs are: {', '.join(i['name'] for i in self.inputs)}")
        results = [np.empty(o["shape"], dtype=o["dtype"]) for o in self.outputs]
        status = self._invoke(arrays, results)
        if status != 0:
            raise RunError(f"{self.report['name']}_run returned status {status}")
        return {o["name"]: r for o, r in zip(self.outputs, results)}

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        raise NotImplementedError


def read_report(out_dir: str | Path) -> dict:
    path = Path(out_dir) / "report.json"
    if not path.is_file():
        raise RunError(f"{out_dir} holds no report.json: is it a folder written by `mlcc build`?")
    return json.loads(path.read_text())


def names() -> list[str]:
    return sorted(_RUNNERS)


def load(out_dir: str | Path, runner: str | None = None) -> LoadedModel:
    """The built model in out_dir, on its target's runner or on `runner` (e.g. "node" for a wasm32 build)."""
    from ..targets import resolve

    out_dir = Path(out_dir)
    report = read_report(out_dir)
    runner = runner or resolve(report["target"]).runner
    if runner not in _RUNNERS:
        raise RunError(f"no runner {runner!r} for target {report['target']!r}; runners: {', '.join(names())}")
    return _RUNNERS[runner](out_dir, report)


def _import_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


_import_all()
