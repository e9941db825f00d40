"""samples/textgen: the committed character-level GPT-2, built once for wasm32 with its cache's past length
variable (--dim past=0..255), generates text with the JavaScript loop of generate.js in Node (node.mjs) and in
the sample page in headless Chromium; both produce exactly the characters of onnxruntime's greedy decoding
of the same model, from the same prompt. The page's screenshot goes to test-artifacts/textgen-sample.png."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mlcc.pipeline import BuildOptions, build
from tests.web_runners import needs_chromium, needs_node

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "textgen"
ARTIFACTS = ROOT / "test-artifacts"
PROMPT, COUNT = "Four score", 40



def vocabulary() -> str:
    spec = importlib.util.spec_from_file_location("textgen_train", SAMPLE / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.VOCABULARY


def greedy_tokens(prompt: str, count: int) -> list[int]:
    """onnxruntime's greedy decoding, the prompt fed a character at a time from an empty cache."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(SAMPLE / "textgen.onnx"), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    past = {i.name: np.zeros([1, i.shape[1], 0, i.shape[3]], np.float32) for i in session.get_inputs()[1:]}
    chars, tokens, logits = vocabulary(), [], None
    for step in range(len(prompt) + count - 1):
        token = chars.index(prompt[step]) if step < len(prompt) else int(logits[0, -1].argmax())
        tokens += [token] if step >= len(prompt) else []
        out = dict(zip(names, session.run(None, {"input_ids": np.array([[token]], np.int64), **past})))
        past = {name: out[name.replace("past_", "present_")] for name in past}
        logits = out["logits"]
    return tokens + [int(logits[0, -1].argmax())]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    out, report = build(SAMPLE / "textgen.onnx", BuildOptions(target="wasm32", dims={"past": (0, 255)},
                                                             out_dir=tmp_path_factory.mktemp("textgen") / "model"))
    assert report["dims"][0]["min"] == 0 and report["dims"][0]["max"] == 255
    return out


@pytest.fixture(scope="module")
def expected() -> list[int]:
    return greedy_tokens(PROMPT, COUNT)


@needs_node
def test_node_generates_what_onnxruntime_decodes(model_dir, expected):
    proc = subprocess.run(["node", str(SAMPLE / "node.mjs"), PROMPT, str(COUNT), str(model_dir), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["tokens"] == expected, "".join(vocabulary()[t] for t in got["tokens"])
    assert got["msPerStep"] > 0


@needs_chromium
def test_page_generates_what_onnxruntime_decodes(model_dir, expected):
    from mlcc.runners.chromium import Session
    from mlcc.runners.devtools import Page

    session = Session.get()
    url = session.server.mount(SAMPLE, "/textgen/")
    session.server.mount(model_dir, "/textgen/model/")
    page = Page(session.browser, width=800, height=600)
    try:
        page.navigate(url)
        page.evaluate("new Promise((ready) => { const check = () => document.body.dataset.ready ? ready() : "
                      "setTimeout(check, 20); check(); })")
        shown = page.evaluate(f"""new Promise((ready) => {{
            document.getElementById("prompt").value = {json.dumps(PROMPT)};
            document.getElementById("count").value = "{COUNT}";
            document.getElementById("go").click();
            const check = () => window.textgenSample.done ? ready({{
                tokens: window.textgenSample.tokens, text: document.getElementById("output").textContent,
                latency: document.getElementById("latency").textContent }}) : setTimeout(check, 20);
            check();
        }})""")
        ARTIFACTS.mkdir(exist_ok=True)
        print(f"textgen sample screenshot: {page.screenshot(ARTIFACTS / 'textgen-sample.png')}")
    finally:
        page.close()
    chars = vocabulary()
    assert shown["tokens"] == expected, shown["text"]
    assert shown["text"] == PROMPT + "".join(chars[t] for t in expected) and "ms" in shown["latency"]
