"""A wasm32 build's folder is an npm package: TypeScript consumers type-check against its NAME.d.ts (the
exact typed array and shape of each tensor), and Node imports it by name and runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlcc.pipeline import BuildOptions, build
from mlcc.verify import reference_outputs
from tests.integration.test_build_systems import small_model
from tests.web_runners import needs_node

ROOT = Path(__file__).resolve().parents[2]
NPM_CACHE = ROOT / ".cache" / "npm"  # scripts/test.sh: npm install --prefix .cache/npm typescript@5


@pytest.fixture(scope="module")
def tsc() -> Path:
    tsc = NPM_CACHE / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() and shutil.which("npm"):
        subprocess.run(["npm", "install", "--prefix", str(NPM_CACHE), "--no-audit", "--no-fund", "typescript@5"],
                       capture_output=True, timeout=300)
    if not tsc.exists():
        pytest.skip("TypeScript is not installed (scripts/test.sh runs npm install --prefix .cache/npm typescript@5)")
    return tsc


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("npm")
    out_dir, _ = build(small_model(tmp / "small.onnx"), BuildOptions(target="wasm32", out_dir=tmp / "small"))
    return out_dir


def _project(tmp_path: Path, package: Path) -> Path:
    """A consumer project with the build folder installed under its package name."""
    project = tmp_path / "consumer"
    (project / "node_modules").mkdir(parents=True)
    name = json.loads((package / "package.json").read_text())["name"]
    (project / "node_modules" / name).symlink_to(package, target_is_directory=True)
    (project / "package.json").write_text(json.dumps({"name": "consumer", "private": True, "type": "module"}))
    return project


def test_package_json_names_the_module_wasm_and_types(package):
    meta = json.loads((package / "package.json").read_text())
    assert meta["name"] == "small" and meta["type"] == "module"
    assert meta["exports"]["."] == {"types": "./small.d.ts", "default": "./small.mjs"}
    assert set(meta["files"]) == {"small.mjs", "small.wasm", "small.d.ts"}
    assert all((package / f).is_file() for f in meta["files"])


CONSUMER_TS = """
import { load, inputs, outputs, type Outputs } from "small";

const imageShape: readonly [1, 2, 8, 8] = inputs[0].shape;
const scoresShape: readonly [1, 5] = outputs[0].shape;
const model = await load();
const result: Outputs = model.run({ image: new Float32Array(inputs[0].size) });
const scores: Float32Array = result.scores;
export const used = [imageShape, scoresShape, scores.length];

// @ts-expect-error: the input is float32, not float64
model.run({ image: new Float64Array(128) });
// @ts-expect-error: an input the model does not have
model.run({ image: new Float32Array(128), extra: new Float32Array(1) });
// @ts-expect-error: the input's shape is exact
const wrongShape: readonly [1, 5] = inputs[0].shape;
// @ts-expect-error: no such output
result.probabilities;
"""

TSCONFIG = {"compilerOptions": {"target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
                                "lib": ["es2022"], "types": [], "strict": True, "noEmit": True},
            "files": ["consumer.ts"]}


def test_typescript_consumer_type_checks(tsc, package, tmp_path):
    project = _project(tmp_path, package)
    (project / "consumer.ts").write_text(CONSUMER_TS)
    (project / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    proc = subprocess.run([str(tsc), "--noEmit", "-p", str(project)], capture_output=True, text=True, timeout=120)
    # each @ts-expect-error line fails the check unless the types refuse it: wrong array type, shape, name
    assert proc.returncode == 0, proc.stdout + proc.stderr


CONSUMER_JS = """
import { readFileSync, writeFileSync } from "node:fs";
import { load } from "small";

const model = await load();
const image = new Float32Array(Uint8Array.from(readFileSync(process.argv[2])).buffer);
writeFileSync(process.argv[3], model.run({ image }).scores);
"""


@needs_node
def test_node_imports_the_package_by_name(package, tmp_path):
    project = _project(tmp_path, package)
    (project / "consumer.mjs").write_text(CONSUMER_JS)
    image = np.random.default_rng(1).standard_normal((1, 2, 8, 8)).astype(np.float32)
    image.tofile(tmp_path / "image.bin")
    subprocess.run(["node", str(project / "consumer.mjs"), str(tmp_path / "image.bin"), str(tmp_path / "scores.bin")],
                   check=True, timeout=60, cwd=project)
    expected, _ = reference_outputs(str(package.parent / "small.onnx"), {"image": image}, ["scores"])
    np.testing.assert_allclose(np.fromfile(tmp_path / "scores.bin", np.float32).reshape(1, 5), expected["scores"],
                               rtol=1e-4, atol=1e-4)
