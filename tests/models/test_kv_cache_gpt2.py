"""GPT-2 with a key/value cache (transformers' GPT2LMHeadModel, a tiny random config, no downloads), exported
with the cache as tensors and the past length a named dim (samples/textgen/train.py's export), built ONCE per
target with `--dim past=0..255` (the cache holds up to 256 positions, the model's context): a 64-token greedy
decode from an empty cache, each step's present fed back as the next step's past, matches onnxruntime's logits
at every step, and picks the same tokens. The slow variant exports with the dynamo exporter as well and decodes
to the bound. Needs the optional test dependencies torch and transformers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from mlcc import runners
from mlcc.pipeline import BuildOptions, build
from tests.golden import shared_model, split_target

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ROOT = Path(__file__).resolve().parents[2]
CONTEXT, LAYERS, HEADS, WIDTH, VOCABULARY = 256, 2, 4, 64, 50
PAST = (0, CONTEXT - 1)


def textgen():
    spec = importlib.util.spec_from_file_location("textgen_train", ROOT / "samples" / "textgen" / "train.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exported(tmp_path_factory, dynamo: bool) -> Path:
    def export(path):
        train = textgen()
        train.export(train.model(seed=0, vocabulary=VOCABULARY, layers=LAYERS, heads=HEADS, width=WIDTH,
                                 context=CONTEXT), path, dynamo=dynamo)

    return shared_model(tmp_path_factory, f"gpt2_{'dynamo' if dynamo else 'legacy'}", export)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory) -> Path:
    return exported(tmp_path_factory, dynamo=False)


def decode(run, steps: int, first_token: int = 1) -> tuple[list[int], list[np.ndarray]]:
    """Greedy decoding from an empty cache: (the tokens fed, the logits of each step)."""
    past = {f"past_{kind}_{layer}": np.zeros((1, HEADS, 0, WIDTH // HEADS), np.float32)
            for layer in range(LAYERS) for kind in ("key", "value")}
    token, tokens, logits = first_token, [], []
    for _ in range(steps):
        out = run({"input_ids": np.array([[token]], np.int64), **past})
        tokens.append(token)
        logits.append(out["logits"])
        past = {name: out[name.replace("past_", "present_")] for name in past}
        token = int(out["logits"][0, -1].argmax())
    return tokens, logits


def check_decode(model_path: Path, target: str, out_dir: Path, steps: int) -> None:
    import onnxruntime as ort

    name, runner = split_target(target)
    built, report = build(model_path, BuildOptions(target=name, out_dir=out_dir, dims={"past": PAST}))
    assert report["dims"] == [{"name": "past", "min": 0, "max": 255, "c_member": "past"}]
    loaded = runners.load(built, runner=runner)
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    want_tokens, want = decode(lambda feeds: dict(zip(names, session.run(None, feeds))), steps)
    got_tokens, got = decode(loaded.run, steps)
    for step, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape == (1, 1, VOCABULARY), step
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"logits at step {step} (past {step}) on {target}")
    assert got_tokens == want_tokens


def test_greedy_decode_matches_at_every_step(legacy, target, tmp_path):
    check_decode(legacy, target, tmp_path / "out", steps=64)


@pytest.mark.slow
@pytest.mark.parametrize("dynamo", [False, True], ids=["legacy", "dynamo"])
def test_greedy_decode_to_the_bound(dynamo, target, tmp_path_factory, tmp_path):
    check_decode(exported(tmp_path_factory, dynamo), target, tmp_path / "out", steps=CONTEXT)
