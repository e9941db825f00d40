"""The C toolchain: Zig's clang from the `ziglang` package, driven by the target's data.

Runtime kernel families are compiled once per (target, source, flags) and cached as objects, so building a
model is one compiler call for its own NAME.c plus a link.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from . import firmware, paths, runner_source, sizes
from .errors import ToolchainError
from .targets import Target

WARNINGS = ("-Wall", "-Wextra", "-Werror")
OPTIMISE = ("-O2", "-fno-math-errno")
# Zig's clang emits debug info by default, which embeds the (temporary) build folder: artifacts would
# differ between identical builds.
REPRODUCIBLE = ("-g0", "-fno-ident")
# Every function and object in its own section, so a link with --gc-sections (ours for shared libraries and
# wasm, a firmware's for static libraries) keeps only what the model calls: a kernel family's other
# functions and variants are dropped.
SECTIONS = ("-ffunction-sections", "-fdata-sections")


@lru_cache(maxsize=1)
def zig_version() -> str:
    return _run([sys.executable, "-m", "ziglang", "version"]).strip()


def zig(tool: str) -> list[str]:
    return [sys.executable, "-m", "ziglang", tool]


def target_flags(target: Target) -> list[str]:
    flags = ["-target", target.triple]
    if target.cpu:
        flags.append(f"-mcpu={target.cpu}")
    flags += list(target.cflags)
    if not target.is_wasm and (target.libc or "shared_library" in target.artifacts):
        flags.append("-fPIC")  # bare-metal code is linked at fixed addresses: no GOT
    return flags


def compile_flags(target: Target, include_dirs: list[str]) -> list[str]:
    # Without a C library, the runtime's own <math.h> and <string.h> (mlcc/freestanding/) come first.
    freestanding = [] if target.libc else [f"{d}/mlcc/freestanding" for d in include_dirs]
    return [
        *target_flags(target), "-std=c99", *OPTIMISE, *REPRODUCIBLE, *SECTIONS, *WARNINGS, "-fvisibility=hidden",
        *(f"-I{d}" for d in freestanding), *(f"-I{d}" for d in include_dirs),
    ]


def display_command(target: Target, source: str) -> str:
    """The command that compiles the generated C, as written into its provenance header."""
    return " ".join(["zig cc", *compile_flags(target, ["mlcc_runtime/include"]), "-c", source])


def _run(cmd: list[str], cwd: str | None = None) -> str:
    # Zig keeps libc builds in its global cache (worth sharing) but would also keep every compiled object
    # there: a model's object holds its whole weights blob, so each build of a large model would leave
    # hundreds of MB behind. Compiled objects go to a throwaway local cache instead; mlcc caches kernels.
    with tempfile.TemporaryDirectory(prefix="mlcc-zig-") as local_cache:
        env = {**os.environ, "ZIG_LOCAL_CACHE_DIR": local_cache}
        return _run_in(cmd, cwd, env)


def _run_in(cmd: list[str], cwd: str | None, env: dict[str, str]) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"timed out: {' '.join(cmd[:6])} ...") from None
    if proc.returncode != 0:
        output = (proc.stderr or proc.stdout).strip()
        raise ToolchainError(f"compiler failed ({' '.join(cmd[2:4])}): {output[:4000]}")
    return proc.stdout


THREAD_POOL = "threadpool"  # runtime_c/kernels/threadpool: targets with a `thread_pool`
WASM_PAGE = 65536


def family_sources(family: str, target: Target | None = None) -> list[Path]:
    """The family's C sources; the thread pool's are one per kind, threadpool-<target.thread_pool>.c."""
    folder = paths.runtime_dir() / "kernels" / family
    pattern = f"{family}-{target.thread_pool}.c" if family == THREAD_POOL and target is not None else "*.c"
    sources = sorted(folder.glob(pattern))
    if not sources:
        raise RuntimeError(f"runtime kernel family {family!r} has no sources in {folder}")
    return sources


def _headers_digest() -> str:
    h = hashlib.sha256()
    for header in sorted((paths.runtime_dir() / "include").rglob("*.h")):
        h.update(header.relative_to(paths.runtime_dir()).as_posix().encode())
        h.update(header.read_bytes())
    return h.hexdigest()


def kernel_objects(target: Target, families: list[str]) -> list[Path]:
    """Objects of every source in the families, compiled for the target (cached across builds)."""
    include = str(paths.runtime_dir() / "include")
    flags = compile_flags(target, [include])
    salt = "\0".join([zig_version(), _headers_digest(), *flags])
    objects, pending = [], []
    cache = paths.cache_dir() / "objects" / target.name
    cache.mkdir(parents=True, exist_ok=True)
    for family in families:
        for source in family_sources(family, target):
            local_headers = "".join(h.read_text() for h in sorted(source.parent.glob("*.h")))
            key = hashlib.sha256("\0".join([salt, source.read_text(), local_headers]).encode()).hexdigest()[:24]
            obj = cache / f"{family}__{source.stem}__{key}.o"
            objects.append(obj)
            if not obj.exists():
                pending.append((source, obj))
    if pending:
        with tempfile.TemporaryDirectory(prefix="mlcc-obj-") as tmp:
            # one compiler call per missing object (zig cc merges several -c sources into one object);
            # each lands under a unique name, then moves into the cache atomically so parallel builds
            # never see half-written files
            for i, (source, obj) in enumerate(pending):
                staged = Path(tmp) / f"k{i}_{source.stem}.o"
                _run([*zig("cc"), *flags, "-I", str(paths.runtime_dir() / "kernels"), "-c", str(source), "-o", str(staged)], cwd=tmp)
                tmp_obj = obj.with_suffix(f".{os.getpid()}.tmp")
                shutil.move(str(staged), tmp_obj)
                os.replace(tmp_obj, obj)
    return objects


def build_artifacts(target: Target, out_dir: Path, name: str, families: list[str], exports: list[str],
                    io: dict | None = None, wasm_heap_bytes: int = 0) -> dict[str, str]:
    """Compile out_dir/NAME.c and link the target's artifacts; returns kind -> path relative to out_dir.
    io (runner_source.tensors) describes the model's tensors to the driver of an executable artifact;
    wasm_heap_bytes, what NAME.mjs uses past __heap_base (a threads build's memory maximum)."""
    objects = kernel_objects(target, families)
    include = ["mlcc_runtime/include"]
    flags = compile_flags(target, include)
    artifacts: dict[str, str] = {}
    if target.is_wasm:
        wasm = f"{name}.wasm"
        link = ["-s", "-Wl,--gc-sections", "-Wl,--export=__heap_base", *(f"-Wl,--export={e}" for e in exports)]
        if target.thread_pool:
            _link_shared_memory_wasm(target, out_dir, name, flags, objects, link, wasm_heap_bytes)
        else:
            _run([*zig("cc"), *flags, f"{name}.c", *map(str, objects), "-o", wasm, *link, *target.ldflags, "-lm"],
                 cwd=str(out_dir))
        artifacts["wasm"] = wasm
        return artifacts
    # the thread pool (mlcc/threadpool.h) is the caller's to call: kept whole, though the model calls none of it
    pool = [obj for obj in objects if obj.name.startswith(f"{THREAD_POOL}__")]
    threads = ["-lpthread"] if pool else []
    with tempfile.TemporaryDirectory(prefix="mlcc-link-") as tmp:
        model_obj = Path(tmp) / f"{name}.o"
        _run([*zig("cc"), *flags, "-c", f"{name}.c", "-o", str(model_obj)], cwd=str(out_dir))
        if "shared_library" in target.artifacts:
            so = f"lib{name}.so"
            libm = ["-lm"] if target.libc else ["-nostdlib"]  # freestanding: the runtime's own math
            _run([*zig("cc"), *target_flags(target), "-shared", "-Wl,--gc-sections", str(model_obj), *map(str, objects), "-o", so,
                  *target.ldflags, *threads, *libm], cwd=str(out_dir))
            artifacts["shared_library"] = so
        if "static_library" in target.artifacts:
            members = [model_obj]
            for obj in [*_needed_objects(model_obj, objects), *pool]:  # readable member names: <family>__<source>.o
                member = Path(tmp) / (obj.name.rsplit("__", 1)[0] + ".o")
                shutil.copyfile(obj, member)
                members.append(member)
            archive = f"lib{name}.a"
            _run([*zig("ar"), "rcs", archive, *map(str, members)], cwd=str(out_dir))
            artifacts["static_library"] = archive
    if "executable" in target.artifacts and io is not None:
        artifacts["executable"] = _link_runner(target, out_dir, name, artifacts["static_library"], io)
    if "firmware" in target.artifacts and io is not None:
        image = _link_firmware(target, out_dir, name, artifacts["static_library"], io)
        if image is not None:
            artifacts["firmware"] = image
    return artifacts


def _link_shared_memory_wasm(target: Target, out_dir: Path, name: str, flags: list[str], objects: list[Path],
                             link: list[str], heap_bytes: int) -> None:
    """NAME.wasm importing one shared memory (env.memory) that the workers' instances share. A shared memory
    declares its maximum, here the static data and stack (the first link's initial size) plus heap_bytes:
    a browser reserves that much address space up front, so it is set from the arena's bound, not 4 GiB.
    The workers set their own __stack_pointer (exported) to stacks past the arena."""
    shared = [*link, "-Wl,--import-memory", "-Wl,--shared-memory", "-Wl,--export=__stack_pointer"]
    with tempfile.TemporaryDirectory(prefix="mlcc-link-") as tmp:
        model_obj = Path(tmp) / f"{name}.o"
        _run([*zig("cc"), *flags, "-c", f"{name}.c", "-o", str(model_obj)], cwd=str(out_dir))
        command = [*zig("cc"), *flags, str(model_obj), *map(str, objects), "-o", f"{name}.wasm", *shared, *target.ldflags, "-lm"]
        _run(command, cwd=str(out_dir))  # without a maximum: it is the initial size, static data and stack
        initial, _ = wasm_memory_pages(out_dir / f"{name}.wasm")
        maximum = initial + -(-heap_bytes // WASM_PAGE)
        _run([*command, f"-Wl,--max-memory={maximum * WASM_PAGE}"], cwd=str(out_dir))


def wasm_memory_pages(wasm: Path) -> tuple[int, int | None]:
    """The (initial, maximum) pages of a module's imported memory (None: no maximum)."""
    data = wasm.read_bytes()

    def uleb(at: int) -> tuple[int, int]:
        return sizes.uleb128(data, at)

    at = 8
    while at < len(data):
        section, (size, at) = data[at], uleb(at + 1)
        if section == 2:  # imports: module name, field name, kind, type
            count, p = uleb(at)
            for _ in range(count):
                for _ in range(2):
                    length, p = uleb(p)
                    p += length
                kind, p = data[p], p + 1
                if kind == 2:  # memory: flags, initial[, maximum]
                    flags, p = data[p], p + 1
                    initial, p = uleb(p)
                    return initial, (uleb(p)[0] if flags & 1 else None)
                if kind == 0:  # function: its type's index
                    p = uleb(p)[1]
                elif kind == 3:  # global: value type, mutability
                    p += 2
                else:  # table: element type, limits
                    flags, p = data[p + 1], p + 2
                    p = uleb(uleb(p)[1])[1] if flags & 1 else uleb(p)[1]
        at += size
    raise ToolchainError(f"{wasm.name} imports no memory")


def _needed_objects(model_obj: Path, objects: list[Path]) -> list[Path]:
    """The kernel objects the model object calls, directly or through each other: what a linker would take
    from the archive, so the library ships (and its size counts) no variant the model does not run."""
    symbols = {obj: sizes.elf_symbols(obj.read_bytes()) for obj in objects}
    definer = {name: obj for obj in reversed(objects) for name in symbols[obj][0]}
    needed: set[Path] = set()
    pending = list(sizes.elf_symbols(model_obj.read_bytes())[1])
    while pending:
        obj = definer.get(pending.pop())
        if obj is not None and obj not in needed:
            needed.add(obj)
            pending += symbols[obj][1]
    return [obj for obj in objects if obj in needed]


def _link_runner(target: Target, out_dir: Path, name: str, archive: str, io: dict) -> str:
    """NAME_runner: the command-line driver linked statically with libNAME.a and the C library."""
    sources = runner_source.write(out_dir, name, target.name, io)
    runner = f"{name}_runner"
    flags = compile_flags(target, ["mlcc_runtime/include"])
    _run([*zig("cc"), *flags, *sources, archive, "-static", "-s", "-o", runner, *target.ldflags, "-lm"], cwd=str(out_dir))
    return runner


def _link_firmware(target: Target, out_dir: Path, name: str, archive: str, io: dict) -> str | None:
    """NAME_firmware.elf: libNAME.a in a complete image for the target's board (mlcc/firmware.py); None
    when the model does not fit the emulated board's memory (the library is still the build's product)."""
    sources, script = firmware.write(out_dir, name, target, io)
    image = f"{name}_firmware.elf"
    try:
        _run([*zig("cc"), *firmware.link_command(target, sources, archive, script, image)], cwd=str(out_dir))
    except ToolchainError as exc:
        if "will not fit in region" in str(exc):
            return None
        raise
    return image
