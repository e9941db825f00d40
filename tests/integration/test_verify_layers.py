"""mlcc verify --layers: a build broken in one step (a bogus pass, added by this test, that shifts one fused
convolution's bias) is reported at that layer first, on host and wasm32, with the layers before it in
tolerance; an unbroken build passes every layer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlcc import passes
from mlcc.layers import format_layers, verify_layers
from mlcc.pipeline import BuildOptions

DIGITS = Path(__file__).resolve().parents[2] / "samples" / "digits_cnn.onnx"


def _break_step_writing(tensor: str):
    """A pass that shifts the bias of the step that writes `tensor` (in any layout): that step's output is wrong."""
    def bogus(graph, target):
        node = next(n for n in graph.nodes if any(v.name in (tensor, f"{tensor}_nhwc") for v in n.outputs))
        bias = next(v for v in reversed(node.inputs) if v is not None and v.is_const and v.data.ndim == 1)
        bias.data = bias.data + np.float32(0.5)
        return {"broken": node.name}
    return bogus


@pytest.mark.parametrize("target", ["host", "wasm32"])
def test_layers_names_the_first_broken_layer(target, monkeypatch):
    real_get, last = passes.get, passes.pipeline(2)[-1]

    def get(name):
        if name != last:
            return real_get(name)
        return lambda graph, t: {**real_get(name)(graph, t), **_break_step_writing("r2")(graph, t)}

    monkeypatch.setattr(passes, "get", get)
    results, engine = verify_layers(DIGITS, BuildOptions(target=target))
    first = next(i for i, r in enumerate(results) if not r.comparison.ok)
    assert results[first].node == "relu2" and results[first].tensor == "r2"  # conv2 + relu2 fused: its last output
    assert [r.node for r in results[:first]] == ["relu1", "pool1"]
    assert all(r.comparison.ok for r in results[:first])
    text = format_layers(results, engine, 1e-3, 1e-4)
    assert "first layer over tolerance: node 'relu2' (Relu), tensor 'r2'" in text
    assert text.splitlines()[first + 1].startswith("FAIL") and text.splitlines()[first + 1].endswith("<- first layer over tolerance")


def test_verify_layers_passes_an_unbroken_build():
    proc = subprocess.run([sys.executable, "-m", "mlcc", "verify", str(DIGITS), "--layers", "-t", "wasm32"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[2] for line in lines[1:-1]] == ["relu1", "pool1", "relu2", "pool2", "flatten", "fc", "softmax"]
    assert lines[-1] == "all 7 layers within tolerance"
