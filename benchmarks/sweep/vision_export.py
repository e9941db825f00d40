"""The vision sweep's cases and their export: run by the export venv's Python, not mlcc's (see vision_models.py).

    .cache/vision-export-venv/bin/python -m benchmarks.sweep.vision_export --out DIR [--only a,b] [--exporters legacy]

PyPI's torchvision does not import beside the CPU torch 2.13 that mlcc's own venv has, so the models are built
and exported in a separate venv (torch 2.14.1 and torchvision 0.29.1 from this machine's disk, timm from PyPI).
This module imports only the standard library at the top: mlcc's side reads the case list from it, and only
the export itself imports torch. For each case and exporter it writes DIR/NAME-EXPORTER.onnx and
DIR/NAME-EXPORTER.json (status, reason, seconds, the case's key), and DIR/NAME.npz, the inputs (fixed seed).
An export whose .json carries the current key is kept (the cache); --force redoes it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

SEED = 0
LEGACY_OPSET, DYNAMO_OPSET = 17, 18
EXPORTERS = ("legacy", "dynamo")  # the default run
# legacy-opset11-dynamic: the legacy exporter at opset 11 with the batch dim exported as a named dim (set at build
# time): how many deployment guides still export. Asked for by --exporters.
ALL_EXPORTERS = (*EXPORTERS, "legacy-opset11-dynamic")
IMAGE = 64  # every image case runs at 64x64 unless its architecture needs more
NUM_CLASSES = 10
INIT = "randomized-1"  # names _randomize's scheme in the cache key: change it when the scheme changes


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # "torchvision" or "timm"
    kind: str  # classification, segmentation, detection backbone, video
    builder: str  # a key of _BUILDERS (torchvision) or a timm model name
    kwargs: dict = field(default_factory=dict, hash=False)
    shape: tuple[int, ...] = (1, 3, IMAGE, IMAGE)
    note: str = ""  # how the model differs from the published architecture, if it does
    wasm: bool = False  # also built and run for wasm32
    fast: bool = False  # kept for select_cases; CI runs no export (see the README)

    @property
    def key(self) -> str:
        """What the cached export depends on: a changed case is exported again."""
        return json.dumps([self.source, self.builder, self.kwargs, list(self.shape), self.note,
                           LEGACY_OPSET, DYNAMO_OPSET, INIT], sort_keys=True)


def _tv(name, kind="classification", shape=(1, 3, IMAGE, IMAGE), note="", wasm=False, builder=None, **kwargs):
    return Case(name, "torchvision", kind, builder or name, kwargs, shape, note, wasm)


def _timm(name, shape=(1, 3, IMAGE, IMAGE), note="", wasm=False, **kwargs):
    return Case(f"timm_{name}", "timm", "classification", name, kwargs, shape, note, wasm)


NARROW = "classifier's hidden layers narrowed from 4096 to 256 (random init; the weights file stays small)"

CASES: list[Case] = [
    # torchvision classification
    # 224x224: the legacy exporter takes AdaptiveAvgPool only where the input size is a multiple of the output's
    _tv("alexnet", shape=(1, 3, 224, 224), note=f"224x224 input; {NARROW}"),
    _tv("vgg11_bn", shape=(1, 3, 224, 224), note=f"224x224 input; {NARROW}"),
    _tv("resnet18", wasm=True),
    _tv("resnet50"),
    _tv("resnext50_32x4d"),
    _tv("squeezenet1_1", wasm=True),
    _tv("densenet121"),
    _tv("googlenet", aux_logits=False, init_weights=True),
    _tv("inception_v3", shape=(1, 3, 96, 96), aux_logits=False, init_weights=True,
        note="96x96 input (its stem needs at least 75)"),
    _tv("mobilenet_v2", wasm=True),
    _tv("mobilenet_v3_small"),
    _tv("mobilenet_v3_large"),
    _tv("shufflenet_v2_x0_5", wasm=True),
    _tv("mnasnet0_5"),
    _tv("efficientnet_b0"),
    _tv("efficientnet_v2_s"),
    _tv("regnet_x_400mf"),
    _tv("regnet_y_400mf"),
    _tv("convnext_tiny"),
    _tv("vit_small_config", builder="vit", wasm=True,
        note="VisionTransformer(image 64, patch 16, 2 layers, 2 heads, hidden 64, mlp 128)"),
    _tv("swin_small_config", builder="swin",
        note="SwinTransformer(patch 4, embed 16, depths [2, 2], heads [1, 2], window 4)"),
    _tv("swin_v2_small_config", builder="swin_v2",
        note="SwinTransformer with V2 blocks (patch 4, embed 16, depths [2, 2], heads [1, 2], window 4)"),
    _tv("maxvit_small_config", builder="maxvit",
        note="MaxVit(stem 16, partition 2, blocks [16, 32] x [1, 1], head dim 8)"),
    # segmentation
    _tv("fcn_resnet50", kind="segmentation", num_classes=3),
    _tv("deeplabv3_mobilenet_v3_large", kind="segmentation", num_classes=3),
    _tv("lraspp_mobilenet_v3_large", kind="segmentation", num_classes=3),
    # detection backbones (their feature pyramids)
    _tv("resnet18_fpn", kind="detection backbone", builder="resnet_fpn",
        note="detection.backbone_utils.resnet_fpn_backbone('resnet18'): 5 pyramid levels"),
    _tv("mobilenet_v3_large_fpn", kind="detection backbone", builder="mobilenet_fpn",
        note="detection.backbone_utils.mobilenet_backbone('mobilenet_v3_large', fpn=True): 3 pyramid levels"),
    # video
    _tv("r3d_18", kind="video", shape=(1, 3, 4, 32, 32), note="4 frames of 32x32"),
    # timm
    _timm("mobilenetv3_small_050", wasm=True),
    _timm("lcnet_050"),
    _timm("ghostnet_100"),
    _timm("regnety_002"),
    _timm("convnext_atto"),
    _timm("repvgg_a0"),
    _timm("vit_tiny_patch16_224", img_size=IMAGE, note="img_size 64"),
    _timm("deit_tiny_patch16_224", img_size=IMAGE, note="img_size 64"),
    _timm("levit_128s", img_size=IMAGE, note="img_size 64"),
    _timm("mobilevit_xxs"),
    _timm("edgenext_xx_small"),
    _timm("poolformer_s12"),
    _timm("mixer_s16_224", img_size=IMAGE, note="img_size 64"),
    _timm("efficientformer_l1", shape=(1, 3, 224, 224), note="224x224 input (its attention biases are for 7x7 tokens)"),
]


def _narrow_classifier(model, width=256):
    """AlexNet's and VGG's classifier: the two 4096-wide Linear layers made `width` wide."""
    import torch

    linears = [i for i, m in enumerate(model.classifier) if isinstance(m, torch.nn.Linear)]
    first, middle, last = linears
    old = model.classifier
    old[first] = torch.nn.Linear(old[first].in_features, width)
    old[middle] = torch.nn.Linear(width, width)
    old[last] = torch.nn.Linear(width, old[last].out_features)
    return model


def _build_torchvision(case: Case):
    import torchvision
    from torchvision.models import detection

    models = torchvision.models
    special = {
        "vit": lambda: models.VisionTransformer(image_size=IMAGE, patch_size=16, num_layers=2, num_heads=2,
                                                hidden_dim=64, mlp_dim=128, num_classes=NUM_CLASSES),
        "swin": lambda: models.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2],
                                               window_size=[4, 4], num_classes=NUM_CLASSES),
        "swin_v2": lambda: models.SwinTransformer(
            patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2], window_size=[4, 4],
            block=models.swin_transformer.SwinTransformerBlockV2,
            downsample_layer=models.swin_transformer.PatchMergingV2, num_classes=NUM_CLASSES),
        "maxvit": lambda: models.MaxVit(input_size=(IMAGE, IMAGE), stem_channels=16, partition_size=2,
                                        block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                                        stochastic_depth_prob=0.0, num_classes=NUM_CLASSES),
        "resnet_fpn": lambda: detection.backbone_utils.resnet_fpn_backbone(
            backbone_name="resnet18", weights=None, trainable_layers=5),
        "mobilenet_fpn": lambda: detection.backbone_utils.mobilenet_backbone(
            backbone_name="mobilenet_v3_large", weights=None, fpn=True, trainable_layers=6),
    }
    if case.builder in special:
        return special[case.builder]()
    if case.kind == "segmentation":
        return getattr(models.segmentation, case.builder)(weights=None, weights_backbone=None, **case.kwargs)
    if case.kind == "video":
        return getattr(models.video, case.builder)(weights=None, num_classes=NUM_CLASSES, **case.kwargs)
    model = getattr(models, case.builder)(weights=None, num_classes=NUM_CLASSES, **case.kwargs)
    return _narrow_classifier(model) if case.note.endswith(NARROW) else model


def _randomize(model) -> None:
    """Every float parameter and statistic drawn at random (fixed seed), in place. The libraries' own init zeroes
    some heads (torchvision's ViT), makes layer scales 1e-6 and BatchNorm the identity: the outputs would hardly
    depend on most of the graph, and a wrong kernel could still match. Weights get std 1/sqrt(fan-in), so
    activations stay of order one through deep nets; norm scales and statistics vary around one."""
    import torch

    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, (p[0].numel() or 1) ** -0.5)
            elif name.endswith("bias"):
                p.normal_(0.0, 0.1)
            else:  # norm weights, layer scales, learned temperatures
                p.uniform_(0.5, 1.5)
        for name, b in model.named_buffers():
            if b.is_floating_point() and name.endswith("running_mean"):
                b.normal_(0.0, 0.1)
            elif b.is_floating_point() and name.endswith("running_var"):
                b.uniform_(0.5, 1.5)


def build_model(case: Case):
    """The case's torch module in eval mode, random init with a fixed seed (see _randomize)."""
    import torch

    torch.manual_seed(SEED)
    if case.source == "timm":
        import timm

        model = timm.create_model(case.builder, pretrained=False, num_classes=NUM_CLASSES, **case.kwargs)
    else:
        model = _build_torchvision(case)
    _randomize(model)
    return model.eval()


class _Tensors:
    """Wraps a model so the export sees one tensor in and a flat tuple of tensors out (a segmentation model's
    dict, a backbone's OrderedDict of pyramid levels)."""

    def __new__(cls, model):
        import torch

        def flatten(out):
            if isinstance(out, torch.Tensor):
                return (out,)
            if isinstance(out, dict):
                out = list(out.values())
            return tuple(t for item in out for t in flatten(item))

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, x):
                return flatten(self.model(x))

        return Wrapper().eval()


def export(case: Case, exporter: str, path: Path, inputs):
    export_model(build_model(case), exporter, path, inputs)


def export_model(model, exporter: str, path: Path, inputs) -> None:
    """Exports `model` (one image tensor in; a tensor, a tuple or a dict of them out) at `inputs`' shape."""
    import torch

    wrapped = _Tensors(model)
    args = (torch.from_numpy(inputs),)
    with torch.no_grad():
        outputs = wrapped(*args)
    names = [f"output{i}" if len(outputs) > 1 else "output" for i in range(len(outputs))]
    quiet = io.StringIO()
    # Not under no_grad for the legacy exporter: nn.MultiheadAttention then takes its inference fast path,
    # aten::_native_multi_head_attention, which that exporter cannot export.
    grad = contextlib.nullcontext() if exporter.startswith("legacy") else torch.no_grad()
    with grad, warnings.catch_warnings(), contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
        warnings.simplefilter("ignore")
        if exporter == "legacy":
            torch.onnx.export(wrapped, args, str(path), input_names=["input"], output_names=names,
                              opset_version=LEGACY_OPSET, dynamo=False)
        elif exporter == "legacy-opset11-dynamic":
            batch = {name: {0: "batch"} for name in ["input", *names]}
            torch.onnx.export(wrapped, args, str(path), input_names=["input"], output_names=names,
                              opset_version=11, dynamo=False, dynamic_axes=batch)
        else:
            torch.onnx.export(wrapped, args, str(path), input_names=["input"], output_names=names,
                              opset_version=DYNAMO_OPSET, dynamo=True, external_data=False, optimize=True)


def _one_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {' '.join(lines[:2]) or type(exc).__name__}"[:300]


def run(cases: list[Case], exporters: list[str], out: Path, force: bool = False) -> None:
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    for case in cases:
        rng = np.random.default_rng(SEED)
        inputs = rng.standard_normal(case.shape).astype(np.float32)
        np.savez(out / f"{case.name}.npz", input=inputs)
        for exporter in exporters:
            meta_path = out / f"{case.name}-{exporter}.json"
            if not force and meta_path.exists() and json.loads(meta_path.read_text()).get("key") == case.key:
                continue
            path = out / f"{case.name}-{exporter}.onnx"
            path.unlink(missing_ok=True)
            start = time.perf_counter()
            try:
                export(case, exporter, path, inputs)
                status, reason = "exported", ""
            except Exception as exc:  # the exporter's own failure: recorded, not ours to fix
                status, reason = "export failed", _one_line(exc)
                traceback.print_exc(file=sys.stderr)
            seconds = time.perf_counter() - start
            meta_path.write_text(json.dumps({"key": case.key, "status": status, "reason": reason,
                                             "seconds": round(seconds, 1), "versions": versions()}))
            print(f"{case.name:28} {exporter:7} {status:13} {seconds:6.1f}s {reason[:100]}", file=sys.stderr,
                  flush=True)


def versions() -> str:
    from importlib import metadata

    found = []
    for package in ("torch", "torchvision", "timm", "onnxscript", "onnx"):
        try:
            found.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            found.append(f"{package} absent")
    return ", ".join(found)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sweep.vision_export", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--only", help="comma-separated case names [all]")
    p.add_argument("--exporters", default=",".join(EXPORTERS))
    p.add_argument("--force", action="store_true", help="export again even where the cache is current")
    args = p.parse_args(argv)
    wanted = set(args.only.split(",")) if args.only else None
    cases = [c for c in CASES if wanted is None or c.name in wanted]
    run(cases, args.exporters.split(","), args.out, args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
