"""Host runner: loads libNAME.so into this process through cffi."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from cffi import FFI

from ..errors import RunError
from . import LoadedModel, register


def aligned_empty(nbytes: int, alignment: int = 64) -> np.ndarray:
    raw = np.empty(nbytes + alignment, dtype=np.uint8)
    start = (-raw.ctypes.data) % alignment
    return raw[start:start + nbytes]


@register("host", runs="shared_library")
class HostModel(LoadedModel):
    def __init__(self, out_dir: Path, report: dict):
        super().__init__(out_dir, report)
        library = out_dir / report["artifacts"].get("shared_library", "")
        if not library.is_file():
            raise RunError(f"{out_dir} has no shared library to load")
        self.ffi = FFI()
        self.ffi.cdef(f"int {report['name']}_run_v(const void *const *inputs, void *const *outputs, void *arena);")
        self.lib = self.ffi.dlopen(str(library.resolve()))
        self.entry = getattr(self.lib, f"{report['name']}_run_v")
        self.arena = aligned_empty(max(report["arena_bytes"], 1))

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        ffi = self.ffi
        in_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in inputs] or [ffi.NULL])
        out_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in outputs])
        return self.entry(in_ptrs, out_ptrs, ffi.cast("void *", self.arena.ctypes.data))
