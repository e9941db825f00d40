"""qemu-system runner: executes NAME_firmware.elf, the image built for a bare-metal target's board
(targets/<name>.toml `board`, `qemu`), on qemu-system-arm's emulation of that board. Tensors pass through
semihosting file I/O as raw little-endian bytes in a scratch folder, the emulator's working directory;
runtime_c/boards/board.h describes the files, the console lines and the exit status.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..errors import RunError
from . import LoadedModel, register

TIMEOUT_SECONDS = 600
SEMIHOSTING = ["-semihosting-config", "enable=on,target=native", "-nographic", "-monitor", "none", "-serial", "none"]
EXIT_STATUS = {2: "could not read or write a tensor file", 3: "the model returned a non-zero status",
               4: "the processor faulted"}


def qemu_system_command(target) -> list[str]:
    if not target.qemu:
        raise RunError(f"target {target.name!r} names no qemu command in its targets/ file")
    if shutil.which(target.qemu[0]) is None:
        raise RunError(f"{target.qemu[0]} not found: install it (Debian: apt-get install qemu-system-arm) "
                       f"to run {target.name} code on its emulated board {target.board}")
    return [*target.qemu, *SEMIHOSTING]


@register("qemu-system", runs="firmware")
class QemuSystemModel(LoadedModel):
    def __init__(self, out_dir: Path, report: dict):
        from ..targets import resolve

        super().__init__(out_dir, report)
        self.image = out_dir / report["artifacts"].get("firmware", "")
        self.target = resolve(report["target"])
        if not report["artifacts"].get("firmware") or not self.image.is_file():
            if self.target.board:
                raise RunError(f"{out_dir} has no firmware image: the model does not fit the memory of the emulated "
                               f"board {self.target.board} (runtime_c/boards/{self.target.board}/memory.ld); "
                               f"libNAME.a is built")
            raise RunError(f"{out_dir} has no firmware image: build it for a target with a board (cortex-m4, cortex-m55)")
        self.command = qemu_system_command(self.target)
        self.stack_bytes: int | None = None  # the last run's stack depth, measured by painting

    def execute(self, inputs: list[np.ndarray], outputs: list[np.ndarray], timeout: float = TIMEOUT_SECONDS) -> str:
        """Runs the image once on `inputs`, fills `outputs`; returns the console text. Raises RunError."""
        with tempfile.TemporaryDirectory(prefix="mlcc-board-") as tmp:
            for i, a in enumerate(inputs):
                (Path(tmp) / f"input{i}.bin").write_bytes(a.tobytes())  # Cortex-M is little-endian, like this host
            cmd = [*self.command, "-kernel", str(self.image.resolve())]
            where = f"{self.image.name} on {self.target.board}"
            try:
                proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:  # run() kills the emulator before raising
                raise RunError(f"{where} ran past {timeout:g} s (qemu-system-arm stopped)") from None
            console = proc.stdout + proc.stderr
            match = re.search(r"^stack_bytes (\d+)$", console, re.M)
            self.stack_bytes = int(match.group(1)) if match else None
            if proc.returncode != 0:
                lines = [ln.strip() for ln in console.splitlines() if ln.strip() and not ln.startswith("stack_bytes")]
                detail = next((ln for ln in lines if ln.startswith(("fault:", "error:"))), lines[-1] if lines else "")
                detail = re.sub(r"^error: ", "", detail)
                what = EXIT_STATUS.get(proc.returncode, f"exit {proc.returncode}")
                raise RunError(f"{where} under {self.command[0]} failed ({what}): {detail[:500]}")
            for i, a in enumerate(outputs):
                a[...] = np.frombuffer((Path(tmp) / f"output{i}.bin").read_bytes(), dtype=a.dtype).reshape(a.shape)
            return console

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        self.execute(inputs, outputs)  # a non-zero status of the model is a RunError with its message
        return 0
