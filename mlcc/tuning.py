"""Tuning files: per-layer choices measured by `mlcc tune` (mlcc/tune.py) that `mlcc build --tuning FILE` takes
over the built-in heuristics.

A choice is keyed by the layer's signature (op, dtype, shapes of its activation, weights and output, its ONNX
attributes and layout: `signature`), the target and the CPU model it was measured on, so one file can hold
several machines' measurements and be shared. A build consults the entries of its own target and CPU and
ignores the others (`Tuning.ignored`, reported as a note). The decision points read it through the target
(`Target.tuning`): choose_winograd (a convolution's algorithm: `Op.algorithms`) and _gemm.use_tile (the
f32-gemm tile of a step). A choice that does not apply to the node it names (edited by hand) leaves the
heuristic's.

The file is JSON:

    {"format": "mlcc-tuning", "version": 1,
     "entries": [{"target": "x86_64-avx512", "cpu": "AMD EPYC 9R14", "signature": "Conv f32 x[1,56,56,64] ...",
                  "choice": {"algorithm": "winograd", "tile": "8x32__avx512"},
                  "default": {...}, "default_ms": 1.9, "tuned_ms": 1.5}]}

`choice` holds `algorithm` (ALGORITHMS) and/or `tile` (a [[variant]] of f32-gemm's manifest); the other
fields are what the tuner measured, for people.
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .errors import MlccError

FORMAT = "mlcc-tuning"
VERSION = 1
IM2COL = "im2col"
# a convolution's: GEMM on im2col columns, Winograd (ops/_winograd.ALGORITHM), direct (ops/_conv_direct.ALGORITHM)
ALGORITHMS = (IM2COL, "winograd_f4x3", "direct")
CHOICES = ("algorithm", "tile")
LAYOUT_ATTR = "layout"  # passes/choose_layout's mark: part of the signature


class TuningError(MlccError):
    """A tuning file that cannot be read, is not one, or names choices mlcc does not have."""


@lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU model as /proc/cpuinfo names it (platform.processor() elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _dims(shape) -> str:
    """A shape as text; a run-time extent (mlcc/extents.py, while lowering) by its expression."""
    return "[" + ",".join(d.text() if hasattr(d, "text") else str(int(d)) for d in shape) + "]"


def signature(node) -> str:
    """What a layer's best implementation depends on: op, dtype, the shapes of its activation (input 0), its
    weights (input 1) and output, its ONNX attributes and layout. Not fused epilogues nor the choices
    themselves, so the signature is the same before and after the decision passes."""
    from . import ops

    op = ops.of(node)
    declared = set(op.attrs) if op is not None else set(node.attrs)
    x = node.inputs[0] if node.inputs else None
    parts = [node.op_type, str(x.dtype) if x is not None else "-"]
    for label, value in (("x", x), ("w", node.input(1) if len(node.inputs) > 1 else None),
                         ("y", node.outputs[0] if node.outputs else None)):
        if value is not None:
            parts.append(label + _dims(value.shape))
    for key in sorted(declared | {LAYOUT_ATTR}):
        if key in node.attrs and node.attrs[key] is not None:
            v = node.attrs[key]
            text = _dims(v) if isinstance(v, (list, tuple)) and all(isinstance(d, int) for d in v) else str(v)
            parts.append(f"{key}={text}")
    return " ".join(parts)


@dataclass(frozen=True)
class Entry:
    target: str
    cpu: str
    signature: str
    choice: dict
    measured: dict = field(default_factory=dict, compare=False)  # default, default_ms, tuned_ms

    def to_json(self) -> dict:
        return {"target": self.target, "cpu": self.cpu, "signature": self.signature, "choice": dict(self.choice),
                **self.measured}


@dataclass(frozen=True)
class Tuning:
    """A tuning file's entries for one target and CPU (`choices`), and how many it ignored."""
    target: str
    cpu: str
    choices: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()  # signature -> sorted (kind, value)
    ignored: int = 0
    source: str = ""

    def choice(self, node, kind: str) -> str | None:
        """The file's `kind` ("algorithm" or "tile") for this node, None where it has none."""
        if not self.choices:
            return None
        return _lookup(self.choices).get(signature(node), {}).get(kind)


@lru_cache(maxsize=16)
def _lookup(choices) -> dict[str, dict[str, str]]:
    return {sig: dict(kv) for sig, kv in choices}


def _tile_names() -> set[str]:
    from .ops import _gemm

    return {t.name for t in _gemm.variants()}


def _check_choice(choice, where: str) -> dict:
    if not isinstance(choice, dict) or not choice:
        raise TuningError("`choice` must be an object with `algorithm` and/or `tile`", where)
    for kind, value in choice.items():
        if kind not in CHOICES:
            raise TuningError(f"unknown choice {kind!r}; choices are {', '.join(CHOICES)}", where)
        valid = ALGORITHMS if kind == "algorithm" else sorted(_tile_names())
        if value not in valid:
            raise TuningError(f"unknown {kind} {value!r}; {kind}s are {', '.join(valid)}", where)
    return choice


def read_entries(path: str | Path) -> list[Entry]:
    """Every entry of a tuning file, checked; one TuningError naming the file (and entry) otherwise."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise TuningError("no such tuning file", where) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TuningError(f"cannot read the tuning file: {exc}", where) from None
    except json.JSONDecodeError as exc:
        raise TuningError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", where) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TuningError(f"not a tuning file (no \"format\": \"{FORMAT}\"); `mlcc tune` writes them", where)
    if data.get("version") != VERSION:
        raise TuningError(f"tuning file version {data.get('version')!r}; this mlcc reads version {VERSION} "
                          "(run `mlcc tune` again)", where)
    rows = data.get("entries")
    if not isinstance(rows, list):
        raise TuningError("`entries` must be a list", where)
    entries = []
    for i, row in enumerate(rows):
        at = f"{where}: entry {i}"
        if not isinstance(row, dict):
            raise TuningError("must be an object", at)
        for key in ("target", "cpu", "signature"):
            if not isinstance(row.get(key), str) or not row[key]:
                raise TuningError(f"`{key}` must be a non-empty string", at)
        choice = _check_choice(row.get("choice"), at)
        measured = {k: v for k, v in row.items() if k not in ("target", "cpu", "signature", "choice")}
        entries.append(Entry(row["target"], row["cpu"], row["signature"], dict(choice), measured))
    return entries


def load(path: str | Path, target: str, cpu: str | None = None) -> Tuning:
    """The file's choices for `target` on `cpu` (this machine's by default)."""
    cpu = cpu or cpu_model()
    entries = read_entries(path)
    mine = [e for e in entries if e.target == target and e.cpu == cpu]
    choices = tuple(sorted((e.signature, tuple(sorted(e.choice.items()))) for e in mine))
    return Tuning(target, cpu, choices, len(entries) - len(mine), str(path))


def write(path: str | Path, entries: list[Entry], keep: list[Entry] = ()) -> None:
    """Write `entries` plus those of `keep` (an existing file's) that they do not replace (same target, CPU
    and signature)."""
    fresh = {(e.target, e.cpu, e.signature) for e in entries}
    rows = [e for e in keep if (e.target, e.cpu, e.signature) not in fresh] + list(entries)
    data = {"format": FORMAT, "version": VERSION, "entries": [e.to_json() for e in rows]}
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def choice(target, node, kind: str) -> str | None:
    """What the target's tuning (Target.tuning) chooses for this node, None without one."""
    tuning = getattr(target, "tuning", None)
    return tuning.choice(node, kind) if tuning is not None else None
