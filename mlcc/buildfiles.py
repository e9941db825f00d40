"""Build-system files for a C build's folder: CMakeLists.txt (a static library named after the model, for
`add_subdirectory` under any toolchain file) and a Zephyr module (zephyr/module.yml, zephyr/CMakeLists.txt,
zephyr/Kconfig), so the folder drops into a CMake project or a Zephyr workspace unchanged.

Both list the same sources from one file, sources.cmake: NAME.c and the runtime kernels it calls; the
runtime's thread pool (targets with a `thread_pool`) is listed apart, for CMake's library with Threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import __version__, toolchain
from .render import render


@dataclass(frozen=True)
class CBuild:
    """How the folder's C compiles under a GCC or Clang of the user's: what sources.cmake says, and what any
    other build of the folder (tests/robustness's system gcc) takes from here rather than a copy. Paths are
    relative to the folder. Every source compiles with the same flags: a kernel written for an ISA the
    flags do not select compiles to nothing (its `#if` on the ISA's macros)."""

    sources: list[str]  # NAME.c and the runtime kernels it calls
    pool_sources: list[str]  # the runtime's pthreads pool, linked with the threads library
    include_dirs: list[str]  # the runtime's <math.h> and <string.h> first where there is no C library
    isa_flags: list[str]  # the target's ISA in GCC and Clang spelling (Target.portable_cflags)


def c_build(target, files: list[str]) -> CBuild:
    """The C build of a folder holding the generated `files` (relative to it) for `target`."""
    # the optional pthreads pool: its own list, linked with Threads (the wasm pool needs no library)
    pool = f"/kernels/{toolchain.THREAD_POOL}/" if target.thread_pool == "pthreads" else None
    c_files = [f for f in files if f.endswith(".c")]
    freestanding = [] if target.libc else ["mlcc_runtime/include/mlcc/freestanding"]
    return CBuild(sources=[f for f in c_files if pool is None or pool not in f],
                  pool_sources=[f for f in c_files if pool is not None and pool in f],
                  include_dirs=[*freestanding, "mlcc_runtime/include", "mlcc_runtime/kernels"],
                  isa_flags=list(target.portable_cflags))


def write(out_dir: Path, name: str, target, files: list[str]) -> list[str]:
    """Writes the build files for the generated `files` (relative to out_dir); returns what it wrote."""
    build = c_build(target, files)
    weights = [f for f in files if f.endswith(".weights.bin")]
    common = dict(name=name, NAME=name.upper(), version=__version__, target=target.name, sources=build.sources,
                  pool_sources=build.pool_sources, include_dirs=build.include_dirs,
                  weights=weights, freestanding=not target.libc, isa_flags=build.isa_flags)
    written = {
        "sources.cmake": render("sources.cmake.j2", **common),
        "CMakeLists.txt": render("CMakeLists.txt.j2", **common),
        "zephyr/module.yml": render("zephyr_module.yml.j2", **common),
        "zephyr/CMakeLists.txt": render("zephyr_CMakeLists.txt.j2", **common),
        "zephyr/Kconfig": render("zephyr_Kconfig.j2", **common),
    }
    (out_dir / "zephyr").mkdir(exist_ok=True)
    for rel, text in written.items():
        (out_dir / rel).write_text(text)
    return list(written)
