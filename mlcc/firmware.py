"""NAME_firmware.elf: a complete image of the model for an emulated board (targets with a `board`), linked
from libNAME.a, the runtime's startup code, the board's linker script and the semihosting harness
(runtime_c/boards/), which `mlcc run` executes under qemu-system-arm (runners/qemu_system.py).

The link line is the one the README documents for a firmware: Zig's clang, the board's script, no C
library; Zig links its compiler runtime (the __aeabi_* helpers clang calls for block zeroing and, on
single-precision FPUs, double arithmetic).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import __version__, paths
from .render import render

BOARDS = Path("boards")
COMMON = ["board.h", "semihost.h", "semihost.c", "startup.c", "harness.c"]
SOURCES = ["startup.c", "semihost.c", "harness.c"]


def board_dir(board: str) -> Path:
    folder = paths.runtime_dir() / BOARDS / board
    if not (folder / "memory.ld").is_file():
        raise RuntimeError(f"board {board!r} has no memory map {folder / 'memory.ld'}")
    return folder


def write(out_dir: Path, name: str, target, io: dict[str, list[dict]]) -> tuple[list[str], str]:
    """Writes NAME_firmware.c and the board support into out_dir; returns (C sources, linker script),
    relative to out_dir."""
    source = f"{name}_firmware.c"
    (out_dir / source).write_text(render("firmware.c.j2", name=name, NAME=name.upper(), version=__version__,
                                         target=target.name, board=target.board, inputs=io["inputs"],
                                         outputs=io["outputs"]))
    dest = out_dir / "mlcc_runtime" / BOARDS
    dest.mkdir(parents=True, exist_ok=True)
    for file in COMMON:
        shutil.copyfile(paths.runtime_dir() / BOARDS / file, dest / file)
    script = dest / f"{target.board}.ld"
    script.write_text(linker_script(target.board))
    rel = Path("mlcc_runtime") / BOARDS
    return [source, *((rel / s).as_posix() for s in SOURCES)], script.relative_to(out_dir).as_posix()


def linker_script(board: str) -> str:
    """The board's memory map, then the sections every Cortex-M image shares: one self-contained script."""
    return (board_dir(board) / "memory.ld").read_text() + "\n" + (paths.runtime_dir() / BOARDS / "cortex-m.ld").read_text()


def link_command(target, sources: list[str], archive: str, script: str, output: str) -> list[str]:
    """The zig cc arguments (after `zig cc`) that link a firmware image: the README's recipe."""
    boards = Path(script).parent.as_posix()
    return ["-target", target.triple, *([f"-mcpu={target.cpu}"] if target.cpu else []), *target.cflags,
            "-std=c99", "-O2", "-g0", "-ffunction-sections", "-fdata-sections", "-Wall", "-Wextra", "-Werror",
            "-I.", f"-I{boards}", "-T", script, "-Wl,--entry=Reset_Handler", "-Wl,--gc-sections", *sources, archive,
            *target.ldflags, "-o", output]


def program_command(target, sources: list[Path], include_dirs: list[Path], script: Path, output: Path) -> list[str]:
    """The zig cc arguments that build a stand-alone C program with a `main` (a kernel test harness, a
    benchmark) into an image for the target's board: the board's startup and semihosting, the runtime's own
    <string.h> and <math.h>; main's return value is the emulator's exit status. `script` receives the
    board's linker script."""
    from .toolchain import compile_flags

    script.write_text(linker_script(target.board))
    runtime = paths.runtime_dir()
    boards = runtime / BOARDS
    support = [boards / "startup.c", boards / "semihost.c", runtime / "kernels" / "freestanding" / "string.c"]
    return [*compile_flags(target, [str(p) for p in (*include_dirs, runtime / "include")]), f"-I{boards}",
            "-T", str(script), "-Wl,--entry=Reset_Handler", "-Wl,--gc-sections",
            *map(str, sources), *map(str, support), *target.ldflags, "-o", str(output)]
