"""wasm32 on the web: NAME.mjs under Node and in headless Chromium, and the browser sample page.

Outputs are compared with onnxruntime's. The sample test saves a screenshot to
test-artifacts/browser-sample.png. The one-case-per-op sweep on these runners is
`python -m pytest tests/ops -n 2 --targets wasm32@node,wasm32@chromium`.
"""

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from mlcc import runners
from mlcc.errors import RunError
from mlcc.pipeline import BuildOptions, build
from mlcc.verify import compare, reference_outputs
from tests.golden import check_model, rand
from tests.web_runners import needs_chromium, needs_node

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "digits_cnn.onnx"
SAMPLE_PAGE = ROOT / "samples" / "browser"
ARTIFACTS = ROOT / "test-artifacts"

WEB_RUNNERS = [pytest.param("wasm32@node", marks=needs_node), pytest.param("wasm32@chromium", marks=needs_chromium)]


def typed_model() -> onnx.ModelProto:
    """Inputs and outputs of several element types, to check each crosses as the right typed array."""
    nodes = [
        helper.make_node("Add", ["x", "x"], ["doubled"]),
        helper.make_node("Mul", ["counts", "counts"], ["squares"]),
        helper.make_node("Greater", ["x", "zero"], ["positive"]),
        helper.make_node("Cast", ["x"], ["half"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["bytes"], ["widened"], to=TensorProto.DOUBLE),
    ]
    graph = helper.make_graph(nodes, "typed", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("counts", TensorProto.INT64, [4]),
        helper.make_tensor_value_info("bytes", TensorProto.UINT8, [5]),
    ], [
        helper.make_tensor_value_info("doubled", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("squares", TensorProto.INT64, [4]),
        helper.make_tensor_value_info("positive", TensorProto.BOOL, [2, 3]),
        helper.make_tensor_value_info("half", TensorProto.FLOAT16, [2, 3]),
        helper.make_tensor_value_info("widened", TensorProto.DOUBLE, [5]),
    ], [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


TYPED_FEEDS = {"x": rand(2, 3), "counts": np.array([-3, 0, 7, 3_000_000_000], np.int64),
               "bytes": np.array([0, 1, 127, 128, 255], np.uint8)}


def sample_image() -> np.ndarray:
    y, x = np.mgrid[0:28, 0:28]
    return (((x + 2 * y) % 7) / np.float32(6.0)).astype(np.float32).reshape(1, 1, 28, 28)


# in node; in Chromium, test_browser_sample runs the same build of the sample against onnxruntime (its page)
@pytest.mark.parametrize("target", WEB_RUNNERS[:1])
def test_sample_model(target, tmp_path):
    check_model(onnx.load(str(SAMPLE)), {"image": sample_image()}, target, tmp_path, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("target", WEB_RUNNERS)
def test_element_types(target, tmp_path):
    check_model(typed_model(), TYPED_FEEDS, target, tmp_path, rtol=0, atol=0)


@pytest.fixture(scope="module")
def typed_build(tmp_path_factory):
    path = tmp_path_factory.mktemp("typed") / "typed.onnx"
    onnx.save(typed_model(), str(path))
    out_dir, _ = build(path, BuildOptions(target="wasm32", out_dir=path.parent / "out"))
    return out_dir


NODE_CHECKS = """
import { load, inputs, outputs, arenaBytes, arrayTypes } from "./typed.mjs";
const model = await load();
const feeds = { x: new Float32Array(6).fill(-1.5), counts: BigInt64Array.of(2n, -3n, 4n, 5n), bytes: new Uint8Array(5) };
const result = model.run(feeds);
const errors = [];
for (const bad of [
  { x: feeds.x, counts: feeds.counts },
  { ...feeds, extra: new Float32Array(1) },
  { ...feeds, counts: new Int32Array(4) },
  { ...feeds, x: [1, 2, 3, 4, 5, 6] },
  { ...feeds, x: new Float32Array(5) },
]) {
  try { model.run(bad); errors.push(null); } catch (error) { errors.push(error.message); }
}
console.log(JSON.stringify({
  kinds: Object.fromEntries(Object.entries(result).map(([name, array]) => [name, array.constructor.name])),
  squares: Array.from(result.squares, String),
  inputs, outputs, arenaBytes, sameMetadata: model.inputs === inputs && model.arenaBytes === arenaBytes,
  float16: arrayTypes.float16.name, errors,
}));
"""


@needs_node
def test_module_api_in_node(typed_build):
    (typed_build / "check.mjs").write_text(NODE_CHECKS)
    proc = subprocess.run(["node", "check.mjs"], cwd=typed_build, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["kinds"] == {"doubled": "Float32Array", "squares": "BigInt64Array", "positive": "Uint8Array",
                            "half": "Uint16Array", "widened": "Float64Array"}
    assert got["squares"] == ["4", "9", "16", "25"]
    report = json.loads((typed_build / "report.json").read_text())
    assert [{k: t[k] for k in ("name", "dtype", "shape")} for t in got["inputs"]] == report["inputs"]
    assert [{k: t[k] for k in ("name", "dtype", "shape")} for t in got["outputs"]] == report["outputs"]
    assert got["arenaBytes"] == report["arena_bytes"] and got["sameMetadata"] and got["float16"] == "Uint16Array"
    missing, extra, wrong_type, plain_array, wrong_length = got["errors"]
    assert 'input "bytes"' in missing and "missing" in missing
    assert 'unknown input "extra"' in extra
    assert 'input "counts"' in wrong_type and "BigInt64Array, got Int32Array" in wrong_type
    assert "Float32Array, got Array" in plain_array
    assert "needs 6 elements, got 5" in wrong_length


def test_module_is_deterministic(typed_build, tmp_path):
    again, _ = build(typed_build.parent / "typed.onnx", BuildOptions(target="wasm32", out_dir=tmp_path / "again"))
    assert (again / "typed.mjs").read_bytes() == (typed_build / "typed.mjs").read_bytes()
    assert "typed.mjs" in json.loads((again / "report.json").read_text())["files"]


def test_web_runners_need_the_module(tmp_path):
    path = tmp_path / "typed.onnx"
    onnx.save(typed_model(), str(path))
    out_dir, _ = build(path, BuildOptions(target="host", out_dir=tmp_path / "host"))
    with pytest.raises(RunError, match=r"runner 'node' runs wasm artifacts; .* has none: its runners are host"):
        runners.load(out_dir, runner="node")


@needs_chromium
def test_browser_sample(tmp_path):
    from mlcc.runners.chromium import Session
    from mlcc.runners.devtools import Page

    build(SAMPLE, BuildOptions(target="wasm32", out_dir=tmp_path / "model"))
    session = Session.get()
    url = session.server.mount(SAMPLE_PAGE, "/sample/")
    session.server.mount(tmp_path / "model", "/sample/model/")
    page = Page(session.browser, width=760, height=600)
    try:
        page.navigate(url)
        page.evaluate("new Promise((ready) => { const check = () => document.body.dataset.ready ? ready() : "
                      "setTimeout(check, 20); check(); })")
        shown = page.evaluate("""(() => {
            document.querySelector('button[data-digit="7"]').click();
            const s = window.digitsSample;
            return { input: Array.from(s.input), output: Array.from(s.output), latencyMs: s.latencyMs,
                     prediction: document.getElementById("prediction").textContent,
                     latency: document.getElementById("latency").textContent };
        })()""")
        ARTIFACTS.mkdir(exist_ok=True)
        screenshot = page.screenshot(ARTIFACTS / "browser-sample.png")
        print(f"browser sample screenshot: {screenshot}")
    finally:
        page.close()

    image = np.array(shown["input"], np.float32).reshape(1, 1, 28, 28)
    assert image.max() > 0.9 and (image > 0.5).mean() > 0.05, "the example digit was not drawn"
    expected, _ = reference_outputs(onnx.load(str(SAMPLE)), {"image": image}, ["probabilities"])
    got = np.array(shown["output"], np.float32).reshape(1, 10)
    assert compare(got, expected["probabilities"], 1e-4, 1e-6).ok
    assert shown["prediction"] == str(int(got.argmax()))
    assert 0 < shown["latencyMs"] < 100 and "ms per run" in shown["latency"]
