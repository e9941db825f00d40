"""Golden C snapshots: the generated NAME.c and NAME.h of small models (tests/codegen/snapshot_models.py) for
x86_64, wasm32 and cortex-m4, compared byte for byte with tests/golden/<model>/<target>/.

Any change to the emitted C fails here with a unified diff, so a refactor shows, model by model, exactly what it
changes. After a change you mean, rewrite the snapshots and commit them with the code:

    MLCC_UPDATE_SNAPSHOTS=1 python -m pytest tests/codegen/test_snapshots.py

x86_64 stands for the host (`host` resolves to whichever x86 target this machine runs best, so its C would
differ between machines). Nothing is compiled: generation only, a few seconds for all.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import onnx
import pytest

from mlcc.pipeline import BuildOptions, build
from tests.codegen.snapshot_models import MODELS

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
TARGETS = ["x86_64", "wasm32", "cortex-m4"]
UPDATE = bool(os.environ.get("MLCC_UPDATE_SNAPSHOTS"))


def generate(model_name: str, target: str, tmp_path: Path) -> dict[str, str]:
    path = tmp_path / f"{model_name}.onnx"
    onnx.save(MODELS[model_name](), str(path))
    out_dir, _ = build(path, BuildOptions(target=target, out_dir=tmp_path / "out", compile=False))
    return {f"{model_name}{ext}": (out_dir / f"{model_name}{ext}").read_text() for ext in (".c", ".h")}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("model_name", MODELS)
def test_generated_c_matches_snapshot(model_name, target, tmp_path):
    folder = GOLDEN / model_name / target
    generated = generate(model_name, target, tmp_path)
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for stale in set(p.name for p in folder.iterdir()) - set(generated):
            (folder / stale).unlink()
        for file, text in generated.items():
            (folder / file).write_text(text)
        return
    diffs = []
    for file, text in generated.items():
        snapshot = folder / file
        assert snapshot.exists(), f"no snapshot {snapshot}: MLCC_UPDATE_SNAPSHOTS=1 python -m pytest {__file__}"
        expected = snapshot.read_text()
        if text != expected:
            diffs += difflib.unified_diff(expected.splitlines(keepends=True), text.splitlines(keepends=True),
                                          f"tests/golden/{model_name}/{target}/{file}", "generated")
    assert not diffs, "generated C differs from its snapshot (MLCC_UPDATE_SNAPSHOTS=1 rewrites them):\n" + "".join(diffs)
