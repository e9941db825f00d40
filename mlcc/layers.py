"""`mlcc verify --layers`: every intermediate tensor of the optimised graph compared with onnxruntime's, in
execution order, to find the first layer that goes wrong.

The instrumented build is the ordinary one with each step's outputs also made graph outputs after the last
pass (so fusion and layout choices are the real build's: a fused step is compared at its last output, a
channels-last tensor after transposing it back). The reference is the ONNX model with the same tensors added
as graph outputs.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import passes, runners
from .ir import Graph
from .pipeline import BuildOptions, build
from .verify import Comparison, compare, reference_outputs

CHANNELS_LAST_SUFFIX = "_nhwc"
# an integer intermediate (a quantized tensor) within this many steps of the reference's is in tolerance:
# its float inputs differ in the last bits, so a value on a rounding boundary may land on either side
QUANTIZED_STEPS = 1  # passes/choose_layout's name for a value it moved to channels-last


@dataclass
class Probe:
    output: str  # the instrumented build's extra output
    tensor: str  # the ONNX tensor it holds
    channels_last: bool  # held as N, spatial..., C: transposed back before comparing


@dataclass
class LayerResult:
    tensor: str
    node: str  # the ONNX node that produces the tensor
    op_type: str
    comparison: Comparison


def _probes(graph: Graph, onnx_tensors: set[str]) -> list[Probe]:
    """The graph's node outputs that hold an ONNX tensor, in execution order, made extra graph outputs."""
    probes, seen = [], set()
    inputs = {id(v) for v in graph.inputs}
    model_outputs = {id(v): name for v, name in zip(graph.outputs, graph.output_names)}
    for node in graph.nodes:
        for v in node.outputs:
            if not v.name or v.is_const or not v.nbytes or id(v) in inputs:
                continue
            name, channels_last = v.name, False
            if name not in onnx_tensors and name.endswith(CHANNELS_LAST_SUFFIX):
                name, channels_last = name[:-len(CHANNELS_LAST_SUFFIX)], True
            if name not in onnx_tensors or name in seen:
                continue  # a tensor the passes made, or one already compared (before a layout change back)
            seen.add(name)
            if id(v) in model_outputs:  # already an output of the build
                probes.append(Probe(model_outputs[id(v)], name, channels_last))
                continue
            probe = Probe(f"mlcc_layer_{len(probes)}", name, channels_last)
            graph.outputs.append(v)
            graph.output_names.append(probe.output)
            probes.append(probe)
    return probes


def _from_channels_last(a: np.ndarray) -> np.ndarray:
    return np.moveaxis(a, -1, 1) if a.ndim >= 3 else a


def _with_outputs(proto, names: list[str]):
    """A copy of the ONNX model whose graph outputs also include `names` (typed where inference knows them)."""
    import onnx

    proto = onnx.ModelProto.FromString(proto.SerializeToString())
    try:
        inferred = {vi.name: vi for vi in onnx.shape_inference.infer_shapes(proto).graph.value_info}
    except Exception:  # an opset inference does not know: untyped outputs still run
        inferred = {}
    present = {o.name for o in proto.graph.output}
    for name in names:
        if name not in present:
            proto.graph.output.append(inferred.get(name) or onnx.helper.make_empty_tensor_value_info(name))
            present.add(name)
    return proto


def verify_layers(model_path: str | Path, options: BuildOptions, feeds: dict | None = None, runner: str | None = None,
                  rtol: float = 1e-3, atol: float = 1e-4, seed: int = 0) -> tuple[list[LayerResult], str]:
    """Build `model_path` instrumented, run it and onnxruntime on the same inputs; each probed tensor's
    comparison in execution order, and the reference engine's name."""
    import onnx

    from .cli import random_inputs

    proto = onnx.load(str(model_path))
    producer = {out: node for node in proto.graph.node for out in node.output}
    probes: list[Probe] = []
    last_pass = passes.pipeline(options.opt_level, options.disabled_passes)[-1]
    chained = options.after_pass

    def after_pass(name: str, graph: Graph) -> None:
        chained(name, graph)
        if name == last_pass:
            probes.extend(_probes(graph, set(producer)))

    with tempfile.TemporaryDirectory(prefix="mlcc-layers-") as tmp:
        options.after_pass, options.out_dir = after_pass, Path(tmp) / "instrumented"
        folder, report = build(model_path, options)
        loaded = runners.load(folder, runner=runner)
        feeds = feeds if feeds is not None else random_inputs(loaded.inputs, seed)
        got = loaded.run(feeds)
    tensors = [p.tensor for p in probes]
    expected, engine = reference_outputs(_with_outputs(proto, tensors), feeds, tensors)
    results = []
    for p in probes:
        value = _from_channels_last(got[p.output]) if p.channels_last else got[p.output]
        if value.dtype != expected[p.tensor].dtype:  # a pass re-typed the tensor (e.g. a quantized island)
            continue
        node = producer[p.tensor]
        comparison = compare(value, expected[p.tensor], rtol, atol)
        if value.dtype.kind in "iu" and comparison.max_abs <= QUANTIZED_STEPS:
            comparison.ok = True  # a quantized tensor a rounding step off: where the layer's error shows
        results.append(LayerResult(p.tensor, node.name or f"({node.op_type} -> {p.tensor})", node.op_type, comparison))
    return results, engine


def format_layers(results: list[LayerResult], engine: str, rtol: float, atol: float) -> str:
    """One line per layer in execution order; the first over tolerance is marked."""
    rows = [f"layers in execution order vs {engine} (rtol {rtol}, atol {atol}; integer tensors within "
            f"{QUANTIZED_STEPS} step):"]
    first = next((i for i, r in enumerate(results) if not r.comparison.ok), None)
    width = max((len(r.node) for r in results), default=4)
    for i, r in enumerate(results):
        c = r.comparison
        mark = "  <- first layer over tolerance" if i == first else ""
        rows.append(f"{'ok  ' if c.ok else 'FAIL'} {i:3d}  {r.node.ljust(width)}  {r.op_type:<18} "
                    f"max abs err {c.max_abs:.3g}, max rel err {c.max_rel:.3g}  ({r.tensor}){mark}")
    if first is None:
        rows.append(f"all {len(results)} layers within tolerance")
    else:
        rows.append(f"first layer over tolerance: node {results[first].node!r} ({results[first].op_type}), "
                    f"tensor {results[first].tensor!r}")
    return "\n".join(rows)
