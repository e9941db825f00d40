"""Runners execute a built model on its target: `load(out_dir)` gives a LoadedModel whose `run` takes and
returns numpy arrays keyed by ONNX names. Each runner module registers itself under the name a target's
`runner` field uses.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import RunError

_RUNNERS: dict[str, Callable] = {}
_RUNS: dict[str, str] = {}  # runner -> the artifact kind it runs (report.json "artifacts" key)
_ALIASES: dict[str, str] = {}


def register(name: str, runs: str, aliases: tuple[str, ...] = ()):
    """A runner class: `runs` is the artifact kind it executes (shared_library, wasm, executable, firmware)."""
    def wrap(factory):
        _RUNNERS[name], _RUNS[name] = factory, runs
        _ALIASES.update({alias: name for alias in aliases})
        return factory
    return wrap


class LoadedModel:
    """Base: checks inputs against report.json and allocates outputs; subclasses implement `_invoke`."""

    def __init__(self, out_dir: Path, report: dict):
        self.out_dir, self.report = out_dir, report
        self.inputs = report["inputs"]
        self.outputs = report["outputs"]
        self.threads = 1

    def use_threads(self, threads: int) -> None:
        """Run NAME_run_parallel on `threads` threads (runners that can say so override this)."""
        if threads != 1:
            raise RunError(f"this runner runs one thread; threads {threads} needs the host runner")

    def __call__(self, *args: np.ndarray, **kwargs: np.ndarray):
        """model(x, y) or model(name=x) or model({name: x}): the outputs in ONNX order (one array for a model
        with one output, else a tuple). run() takes and gives dicts keyed by ONNX names."""
        if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
            feeds = dict(args[0])
        else:
            if len(args) > len(self.inputs):
                raise RunError(f"{len(args)} inputs given, the model takes {len(self.inputs)}: "
                               f"{', '.join(i['name'] for i in self.inputs)}")
            feeds = {spec["name"]: a for spec, a in zip(self.inputs, args)}
            twice = set(feeds) & set(kwargs)
            if twice:
                raise RunError(f"input(s) {sorted(twice)} given both by position and by name")
            feeds.update(kwargs)
        results = tuple(self.run(feeds).values())
        return results[0] if len(results) == 1 else results

    def run(self, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        missing = [spec["name"] for spec in self.inputs if spec["name"] not in feeds]
        if missing:
            raise RunError(f"missing input {missing[0]!r}; the model's inputs are: {', '.join(i['name'] for i in self.inputs)}")
        extra = set(feeds) - {i["name"] for i in self.inputs}
        if extra:
            raise RunError(f"unknown input(s) {sorted(extra)}; the model's inputs are: {', '.join(i['name'] for i in self.inputs)}")
        given = [np.asarray(feeds[spec["name"]]) for spec in self.inputs]
        sizes = run_time_sizes(self.report, [a.shape for a in given])
        arrays = []
        for spec, array in zip(self.inputs, given):
            expected = shape_at(spec, sizes)
            if tuple(array.shape) != expected:
                built = f"{spec['dims']} ({_ranges_text(self.report)})" if "dims" in spec else spec["shape"]
                raise RunError(f"input {spec['name']!r} has shape {list(array.shape)}, the model was built for {built}")
            arrays.append(np.ascontiguousarray(array, dtype=spec["dtype"]))
        if not sizes:
            results = [np.empty(o["shape"], dtype=o["dtype"]) for o in self.outputs]
            status = self._invoke(arrays, results)
        else:  # buffers for the largest shapes; the run writes each output packed at its shape
            largest = [np.empty(int(np.prod(o["shape"], dtype=np.int64)), dtype=o["dtype"]) for o in self.outputs]
            status, flat_shapes = self._invoke_dims(arrays, largest, [sizes[d["name"]] for d in self.report["dims"]])
            results, at = [], 0
            for o, buffer in zip(self.outputs, largest):
                shape = tuple(int(n) for n in flat_shapes[at:at + len(o["shape"])])
                at += len(o["shape"])
                results.append(buffer[:int(np.prod(shape, dtype=np.int64))].reshape(shape))
        if status != 0:
            raise RunError(f"{self.report['name']}_run returned status {status}")
        return {o["name"]: r for o, r in zip(self.outputs, results)}

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        raise NotImplementedError

    def _invoke_dims(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int]) -> tuple[int, list[int]]:
        """NAME_run_dims: the status and every output's dims, in order."""
        raise RunError(f"the {type(self).__name__} runner does not run models with run-time dimensions yet")


def _ranges_text(report: dict) -> str:
    return ", ".join(f"{d['name']} in {d['min']}..{d['max']}" for d in report.get("dims", []))


def evaluate(dim, sizes: dict[str, int]) -> int:
    """A report's dim: a number, or the text of an expression of the run-time sizes (`64*seq+1`,
    `(W-1)//2+1`: whole numbers, names, + - * //, parentheses)."""
    if isinstance(dim, int):
        return dim
    tokens = re.findall(r"\d+|[A-Za-z_][A-Za-z0-9_]*|//|[-+*()]", dim)
    at = 0

    def factor() -> int:
        nonlocal at
        token = tokens[at]
        at += 1
        if token == "(":
            value = expression()
            at += 1  # ")"
            return value
        return int(token) if token.isdigit() else sizes[token]

    def term() -> int:
        nonlocal at
        value = factor()
        while at < len(tokens) and tokens[at] in ("*", "//"):
            op = tokens[at]
            at += 1
            value = value * factor() if op == "*" else value // factor()
        return value

    def expression() -> int:
        nonlocal at
        sign = 1
        if tokens[at] == "-":
            sign, at = -1, at + 1
        value = sign * term()
        while at < len(tokens) and tokens[at] in "+-":
            op = tokens[at]
            at += 1
            value = value + term() if op == "+" else value - term()
        return value

    return expression()


def shape_at(spec: dict, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(evaluate(d, sizes) for d in spec["dims"]) if "dims" in spec else tuple(spec["shape"])


def run_time_sizes(report: dict, shapes: list[tuple[int, ...]]) -> dict[str, int]:
    """The size of each run-time dimension, read off the inputs' shapes (where an input dim is that
    dimension alone) and checked against its range; {} for a model without any."""
    declared = report.get("dims", [])
    if not declared:
        return {}
    sizes: dict[str, int] = {}
    for spec, shape in zip(report["inputs"], shapes):
        for axis, dim in enumerate(spec.get("dims", [])):
            if isinstance(dim, str) and dim in {d["name"] for d in declared} and axis < len(shape):
                if sizes.setdefault(dim, int(shape[axis])) != int(shape[axis]):
                    raise RunError(f"input {spec['name']!r} has {shape[axis]} at dim {axis} ({dim}), another input "
                                   f"{sizes[dim]}")
    for d in declared:
        if d["name"] not in sizes:
            raise RunError(f"no input dim is {d['name']} alone, so its size cannot be read off the inputs")
        if not d["min"] <= sizes[d["name"]] <= d["max"]:
            where = next(f"input {spec['name']!r} dim {axis}" for spec in report["inputs"]
                         for axis, dim in enumerate(spec.get("dims", [])) if dim == d["name"])
            raise RunError(f"{where} is {sizes[d['name']]}: {d['name']} must be within {d['min']}..{d['max']}, the "
                           "range the model was built for")
    return sizes


def read_report(out_dir: str | Path) -> dict:
    path = Path(out_dir) / "report.json"
    if not path.is_file():
        raise RunError(f"{out_dir} holds no report.json: is it a folder written by `mlcc build`?")
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RunError(f"unreadable report.json ({type(exc).__name__}): rebuild the folder with `mlcc build`",
                       str(out_dir)) from None
    if not isinstance(report, dict):
        raise RunError("report.json is not a build report: rebuild the folder with `mlcc build`", str(out_dir))
    return report


def names() -> list[str]:
    return sorted([*_RUNNERS, *_ALIASES])


def load(out_dir: str | Path, runner: str | None = None, threads: int = 1) -> LoadedModel:
    """The built model in out_dir, on its target's runner or on `runner` (e.g. "node" for a wasm32 build);
    threads > 1 runs NAME_run_parallel on the runtime's thread pool (the host runner)."""
    from ..targets import resolve

    out_dir = Path(out_dir)
    report = read_report(out_dir)
    own = resolve(report["target"]).runner
    asked = runner
    runner = _ALIASES.get(runner, runner) or own
    if runner not in _RUNNERS:
        raise RunError(f"no runner {asked!r}; runners: {', '.join(names())}")
    # the target's own runner explains a missing artifact itself (e.g. a firmware too large for the board)
    if runner != own and _RUNS[runner] not in report["artifacts"]:
        fitting = sorted(n for n, kind in _RUNS.items() if kind in report["artifacts"])
        raise RunError(f"runner {asked!r} runs {_RUNS[runner].replace('_', ' ')} artifacts; {out_dir} (target "
                       f"{report['target']}) has none: its runners are {', '.join(fitting) or 'none'}")
    model = _RUNNERS[runner](out_dir, report)
    if threads != 1:
        model.use_threads(threads)
    return model


def _import_all() -> None:
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


_import_all()
