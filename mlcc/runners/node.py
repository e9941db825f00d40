"""node runner: runs a wasm32 build's NAME.mjs under Node.js, the way a JavaScript user would.

Each run is one `node` process (web/run_node.mjs) that loads the module, reads the inputs from files,
and writes the outputs to files (raw little-endian tensors in ONNX order).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ..errors import RunError
from . import LoadedModel, register

DRIVER = Path(__file__).with_name("web") / "run_node.mjs"
TIMEOUT_SECONDS = 600


def js_module(out_dir: Path, report: dict) -> Path:
    """The ES module of a wasm32 build, checked to be there with its .wasm."""
    module = out_dir / f"{report['name']}.mjs"
    wasm = out_dir / report["artifacts"].get("wasm", "")
    if not module.is_file() or not wasm.is_file():
        raise RunError(f"{out_dir} has no {module.name} and .wasm to run: build it for wasm32")
    return module


@register("node", runs="wasm")
class NodeModel(LoadedModel):
    def __init__(self, out_dir: Path, report: dict):
        super().__init__(out_dir, report)
        self.module = js_module(out_dir, report)
        self.node = shutil.which("node")
        if self.node is None:
            raise RunError("the node runner needs Node.js (`node` on PATH; Debian package nodejs)")

    def use_threads(self, threads: int) -> None:
        """Run on `threads` threads: the ES module's pool of threads - 1 workers (a threads build, target
        thread_pool "wasm-workers"); 1 runs NAME_run_v."""
        if threads < 1:
            raise RunError(f"threads {threads}: must be 1 or more")
        if threads != 1 and not self._threads_build():
            raise RunError(f"threads {threads} needs a threads build (-t wasm32-threads); "
                           f"{self.out_dir} was built for {self.report.get('target')}")
        self.threads = threads

    def _threads_build(self) -> bool:
        from ..targets import resolve

        return bool(resolve(self.report.get("target", "wasm32")).thread_pool)

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        return self._call(inputs, outputs, None)[0]

    def _invoke_dims(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int]) -> tuple[int, list[int]]:
        return self._call(inputs, outputs, sizes)

    def _call(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int] | None) -> tuple[int, list[int]]:
        """One node process; with `sizes` (NAME_dims in order) they go to NAME.mjs's run() by name, and the
        outputs come back at their run-time shapes, packed at the start of each buffer."""
        with tempfile.TemporaryDirectory(prefix="mlcc-node-") as tmp:
            folder = Path(tmp)
            for i, a in enumerate(inputs):
                (folder / f"input{i}.bin").write_bytes(a.tobytes())
            if sizes is not None:
                names = [d["name"] for d in self.report["dims"]]
                (folder / "dims.json").write_text(json.dumps(dict(zip(names, sizes))))
            try:
                threads = [str(self.threads)] if self._threads_build() else []
                proc = subprocess.run([self.node, str(DRIVER), str(self.module.resolve()), tmp, *threads],
                                      capture_output=True, text=True, timeout=TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                raise RunError(f"node did not finish {self.module.name} within {TIMEOUT_SECONDS} s") from None
            if proc.returncode != 0:
                raise RunError(f"node failed running {self.module.name}: {_last_error(proc.stderr)}")
            shapes = []
            for i, a in enumerate(outputs):
                data = np.fromfile(folder / f"output{i}.bin", dtype=a.dtype)
                a.reshape(-1)[:data.size] = data
            if sizes is not None:
                shapes = [n for shape in json.loads((folder / "shapes.json").read_text()) for n in shape]
        return 0, shapes


def _last_error(stderr: str) -> str:
    """Node prints the thrown error's line among its stack trace; keep that line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line.split(":", 1)[0]]
    return (errors or lines or ["no message"])[0]
