"""qemu-user runner: executes NAME_runner, the static executable built for a Linux cross target, under the
target's qemu command (targets/<name>.toml `qemu`). Tensors pass through files as raw little-endian bytes;
runtime_c/include/mlcc/runner.h describes the driver's command line and exit status; a model with run-time
dimensions gets their sizes with --dims and prints its outputs' shapes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import RunError
from . import LoadedModel, register

TIMEOUT_SECONDS = 3600


def qemu_command(target) -> list[str]:
    """The target's qemu-user command, checked to exist and to be recent enough."""
    if not target.qemu:
        raise RunError(f"target {target.name!r} names no qemu command in its targets/ file")
    if shutil.which(target.qemu[0]) is None:
        raise RunError(f"{target.qemu[0]} not found: install qemu-user (Debian: apt-get install qemu-user) "
                       f"to run {target.name} code on this machine")
    if target.qemu_min_version:
        have = qemu_version(target.qemu[0])
        if have < _version_tuple(target.qemu_min_version):
            raise RunError(f"{target.qemu[0]} {'.'.join(map(str, have))} is too old for {target.name}: it needs "
                           f"qemu-user {target.qemu_min_version} or newer (scripts/test.sh installs one)")
    return list(target.qemu)


@lru_cache(maxsize=None)
def qemu_version(executable: str) -> tuple[int, ...]:
    proc = subprocess.run([executable, "--version"], capture_output=True, text=True)
    match = re.search(r"version (\d+(?:\.\d+)*)", proc.stdout)
    return _version_tuple(match.group(1)) if match else ()


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


@register("qemu", runs="executable", aliases=("qemu-user",))
class QemuModel(LoadedModel):
    def __init__(self, out_dir: Path, report: dict):
        from ..targets import resolve

        super().__init__(out_dir, report)
        self.executable = out_dir / report["artifacts"].get("executable", "")
        if not self.executable.is_file():
            raise RunError(f"{out_dir} has no runner executable: build it for a Linux cross target")
        self.command = qemu_command(resolve(report["target"]))

    def execute(self, inputs: list[np.ndarray], outputs: list[np.ndarray], options: tuple[str, ...] = ()) -> str:
        """Runs the executable on `inputs`, fills `outputs`; returns its stdout. Raises RunError on failure."""
        with tempfile.TemporaryDirectory(prefix="mlcc-qemu-") as tmp:
            in_paths = [Path(tmp) / f"input{i}.bin" for i in range(len(inputs))]
            out_paths = [Path(tmp) / f"output{i}.bin" for i in range(len(outputs))]
            for a, path in zip(inputs, in_paths):
                path.write_bytes(a.tobytes())  # every target here is little-endian, like this host
            cmd = [*self.command, str(self.executable.resolve()), *options, *map(str, in_paths), *map(str, out_paths)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                raise RunError(f"{self.executable.name} under {self.command[0]} ran past {TIMEOUT_SECONDS} s") from None
            if proc.returncode != 0:
                raise RunError(f"{self.executable.name} under {self.command[0]} failed (exit {proc.returncode}): "
                               f"{proc.stderr.strip()[:2000]}")
            for a, path in zip(outputs, out_paths):  # with --dims a buffer for the largest shape, flat
                data = np.frombuffer(path.read_bytes(), dtype=a.dtype)
                a.reshape(-1)[:data.size] = data
            return proc.stdout

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        self.execute(inputs, outputs)  # a non-zero status of the model is a RunError with its message
        return 0

    def _invoke_dims(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int]) -> tuple[int, list[int]]:
        """NAME_runner --dims: the sizes in NAME_dims's order; the driver prints every output's shape."""
        stdout = self.execute(inputs, outputs, ("--dims", ",".join(map(str, sizes))))
        shapes = [int(d) for line in stdout.splitlines() if line.startswith("output_shape") for d in line.split()[1:]]
        return 0, shapes

    def time_runs(self, inputs: list[np.ndarray], outputs: list[np.ndarray], warmup: int, repeat: int) -> np.ndarray:
        """Nanoseconds of each of `repeat` calls of NAME_run_v after `warmup`, timed inside the emulated
        program (qemu-user's speed, not the target hardware's)."""
        stdout = self.execute(inputs, outputs, ("--warmup", str(warmup), "--repeat", str(repeat)))
        return np.array([int(line.split()[1]) for line in stdout.splitlines() if line.startswith("run_ns ")], np.uint64)
