"""Build-system files for a C build's folder: CMakeLists.txt (a static library named after the model, for
`add_subdirectory` under any toolchain file) and a Zephyr module (zephyr/module.yml, zephyr/CMakeLists.txt,
zephyr/Kconfig), so the folder drops into a CMake project or a Zephyr workspace unchanged.

Both list the same sources from one file, sources.cmake: NAME.c and the runtime kernels it calls; the
runtime's thread pool (targets with a `thread_pool`) is listed apart, for CMake's library with Threads.
"""

from __future__ import annotations

from pathlib import Path

from . import __version__, toolchain
from .render import render


def write(out_dir: Path, name: str, target, files: list[str]) -> list[str]:
    """Writes the build files for the generated `files` (relative to out_dir); returns what it wrote."""
    # the optional pthreads pool: its own list, linked with Threads (the wasm pool needs no library)
    pool = f"/kernels/{toolchain.THREAD_POOL}/" if target.thread_pool == "pthreads" else None
    sources = [f for f in files if f.endswith(".c") and (pool is None or pool not in f)]
    pool_sources = [f for f in files if f.endswith(".c") and pool is not None and pool in f]
    weights = [f for f in files if f.endswith(".weights.bin")]
    common = dict(name=name, NAME=name.upper(), version=__version__, target=target.name, sources=sources,
                  pool_sources=pool_sources,
                  weights=weights, freestanding=not target.libc, isa_flags=list(target.portable_cflags))
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
