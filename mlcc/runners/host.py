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
        self.pool = self.parallel = None

    def use_threads(self, threads: int) -> None:
        """Run through NAME_run_parallel (NAME_run_dims_parallel with run-time dimensions) on the runtime's
        thread pool of `threads` threads (this one and threads - 1 workers); 1 goes back to NAME_run_v."""
        if threads < 1:
            raise RunError(f"threads {threads}: must be 1 or more")
        self.close()
        self.threads = threads
        if threads == 1:
            return
        ffi, name = self.ffi, self.report["name"]
        if not hasattr(self, "_parallel_declared"):
            ffi.cdef(_PARALLEL_CDEF + f"int {name}_run_parallel(const void *const *inputs, void *const *outputs, "
                     "void *arena, const mlcc_parallel *parallel);")
            self._parallel_declared = True
        if self.report.get("dims") and not hasattr(self, "_dims_parallel_declared"):
            ffi.cdef(f"int {name}_run_dims_parallel(const size_t *dims, const void *const *inputs, void *const *outputs, "
                     "size_t *output_shapes, void *arena, const mlcc_parallel *parallel);")
            self._dims_parallel_declared = True
        try:
            create = self.lib.mlcc_threadpool_create
            self.parallel_entry = getattr(self.lib, f"{name}_run_parallel")
            if self.report.get("dims"):
                self.parallel_dims_entry = getattr(self.lib, f"{name}_run_dims_parallel")
        except AttributeError:
            raise RunError(f"{self.out_dir} has no thread pool or {name}_run_parallel: rebuild it with this mlcc "
                           f"for a target with a thread_pool") from None
        self.pool = create(threads)
        if self.pool == ffi.NULL:
            raise RunError(f"could not start a pool of {threads} threads")
        self.parallel = ffi.new("mlcc_parallel *", self.lib.mlcc_threadpool_parallel(self.pool))

    def close(self) -> None:
        if self.pool is not None:
            self.lib.mlcc_threadpool_destroy(self.pool)
            self.pool = self.parallel = None

    def __del__(self):
        if getattr(self, "pool", None) is not None:
            self.close()

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        ffi = self.ffi
        in_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in inputs] or [ffi.NULL])
        out_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in outputs])
        arena = ffi.cast("void *", self.arena.ctypes.data)
        if self.parallel is not None:
            return self.parallel_entry(in_ptrs, out_ptrs, arena, self.parallel)
        return self.entry(in_ptrs, out_ptrs, arena)

    def _invoke_dims(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int]) -> tuple[int, list[int]]:
        ffi = self.ffi
        in_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in inputs] or [ffi.NULL])
        out_ptrs = ffi.new("void *[]", [ffi.cast("void *", a.ctypes.data) for a in outputs])
        shapes = ffi.new("size_t[]", max(1, sum(len(o["shape"]) for o in self.outputs)))
        arena = ffi.cast("void *", self.arena.ctypes.data)
        if self.parallel is not None:
            status = self.parallel_dims_entry(ffi.new("size_t[]", sizes), in_ptrs, out_ptrs, shapes, arena, self.parallel)
        else:
            status = self.entry_dims(ffi.new("size_t[]", sizes), in_ptrs, out_ptrs, shapes, arena)
        return status, list(shapes)


# runtime_c/include/mlcc/parallel.h and threadpool.h
_PARALLEL_CDEF = """
typedef struct mlcc_parallel {
    void (*parallel_for)(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n);
    void *ctx;
    unsigned max_threads;
} mlcc_parallel;
typedef struct mlcc_threadpool mlcc_threadpool;
mlcc_threadpool *mlcc_threadpool_create(unsigned threads);
void mlcc_threadpool_destroy(mlcc_threadpool *pool);
mlcc_parallel mlcc_threadpool_parallel(mlcc_threadpool *pool);
"""
