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
        if report.get("dims"):  # NAME_dims is size_t members in order: passed as an array of them
            self.ffi.cdef(f"int {report['name']}_run_dims(const size_t *dims, const void *const *inputs, "
                          "void *const *outputs, size_t *output_shapes, void *arena);")
            self.entry_dims = getattr(self.lib, f"{report['name']}_run_dims")
        self.arena = aligned_empty(max(report["arena_bytes"], 1))

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        ffi = self.ffi
        in_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in inputs] or [ffi.NULL])
        out_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in outputs])
        return self.entry(in_ptrs, out_ptrs, ffi.cast("void *", self.arena.ctypes.data))

    def _invoke_dims(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int]) -> tuple[int, list[int]]:
        ffi = self.ffi
        in_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in inputs] or [ffi.NULL])
        out_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in outputs])
        shapes = ffi.new("size_t[]", max(1, sum(len(o["shape"]) for o in self.outputs)))
        status = self.entry_dims(ffi.new("size_t[]", sizes), in_ptrs, out_ptrs, shapes,
                                 ffi.cast("void *", self.arena.ctypes.data))
        return status, list(shapes)
