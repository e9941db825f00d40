"""NAME_runner.c: the command-line driver linked into NAME_runner on targets whose artifacts include an
executable (Linux cross targets, run under qemu-user). The generated file only describes the model's
tensors; the driver itself is runtime_c/runner/runner.c, copied next to it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from . import __version__, paths
from .render import render

DRIVER = Path("runner") / "runner.c"


def tensors(graph, dims: int = 0) -> dict:
    """The model's inputs and outputs as the driver sees them: ONNX name, bytes (at the largest sizes), rank,
    element bytes, type for a comment; and how many run-time dimensions it takes."""
    def info(value, name=None):
        return {"name": name or value.name, "nbytes": value.nbytes, "rank": len(value.shape),
                "element_bytes": value.dtype.itemsize, "type": value.type_str()}
    return {"inputs": [info(v) for v in graph.inputs],
            "outputs": [info(v, n) for v, n in zip(graph.outputs, graph.output_names)], "dims": dims}


def write(out_dir: Path, name: str, target_name: str, io: dict[str, list[dict]]) -> list[str]:
    """Writes NAME_runner.c and the driver into out_dir; returns both, relative to out_dir."""
    source = f"{name}_runner.c"
    (out_dir / source).write_text(render("runner.c.j2", name=name, NAME=name.upper(), version=__version__,
                                         target=target_name, inputs=io["inputs"], outputs=io["outputs"],
                                         dims=io.get("dims", 0)))
    driver = Path("mlcc_runtime") / DRIVER
    (out_dir / driver).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(paths.runtime_dir() / DRIVER, out_dir / driver)
    return [source, driver.as_posix()]
