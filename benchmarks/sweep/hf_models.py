"""The Hugging Face sweep: 24 `transformers` architectures at random init from small configs built here (no hub
downloads), exported by torch.onnx at fixed shapes (the legacy TorchScript exporter and the dynamo one), built
by mlcc for each target and compared with onnxruntime on the same inputs.

    python -m benchmarks.sweep.hf_models                       # every model, both exporters, host and the wasm32 subset
    python -m benchmarks.sweep.hf_models --fast                 # the CI subset (tests/models/test_hf_sweep.py)
    python -m benchmarks.sweep.hf_models --only bert,gpt2 --exporters legacy --targets host
    python -m benchmarks.sweep.hf_models --markdown benchmarks/results/hf_sweep.md
    python -m benchmarks.sweep.hf_models --exporters dynamo-unoptimized --only bert,llama --targets host
    python -m benchmarks.sweep.hf_models --exporters legacy --opset 11 --attention eager --dynamic --targets host

Needs `pip install -e '.[hf]'` (the CPU torch wheel, onnxscript for the dynamo exporter, transformers: it does
not require torch, so pip leaves the CPU wheel alone). Every config is tiny (hidden 32, 2 layers, 2 heads) and
the weights are random with a fixed seed, so nothing is fetched. Outputs within rtol 1e-3, atol 1e-4
(onnxruntime and mlcc sum in different orders).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from benchmarks.sweep import (
    Result,
    check_export,
    cli,
    one_line,
    pass_summary,
    select_cases,
    sweep_cases,
    table,
    versions,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # configs are built here: nothing may come from the hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RTOL, ATOL = 1e-3, 1e-4
SEED = 0
OPSET = 17
SEQ, VOCAB, IMAGE = 8, 100, 32
VERSIONS = ("transformers", "torch", "onnxscript", "onnxruntime", "onnx")
EXPORTERS = ("legacy", "dynamo")  # the default run
# dynamo-unoptimized: the dynamo exporter with optimize=False (its raw graph: CastLike, Identity, GatherND, IsNaN
# left in), asked for by --exporters
ALL_EXPORTERS = (*EXPORTERS, "dynamo-unoptimized")
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


@dataclass
class Case:
    name: str
    make: Callable  # () -> (torch module in eval mode, {input name: numpy array})
    wasm: bool = False  # also built and run for wasm32
    fast: bool = False  # in the CI subset


@dataclass(frozen=True)
class ExportOptions:
    """How every case is exported, beyond the exporter: the defaults are what a user gets today."""
    opset: int = OPSET  # the legacy exporter's (below 14 needs attention="eager": SDPA has no older form)
    attention: str | None = None  # transformers' attn_implementation; None: its default (sdpa)
    dynamic: bool = False  # legacy: batch (and a text input's sequence) exported as named dims, set at build


def _text_inputs(mask: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    feeds = {"input_ids": rng.integers(3, VOCAB, size=(1, SEQ), dtype=np.int64)}
    # The last two tokens are padding: the mask path is exercised, not folded away. Causal LMs get a mask too:
    # without one transformers looks for packed sequences with torch.diff, which the legacy exporter lacks.
    if mask:
        feeds["attention_mask"] = np.array([[1] * (SEQ - 2) + [0, 0]], dtype=np.int64)
    return feeds


def _image_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    return {"pixel_values": rng.standard_normal((1, 3, IMAGE, IMAGE)).astype(np.float32)}


def _model(cls_name: str, config_name: str, inputs: Callable[[], dict], part: str = "", **config):
    """A factory for transformers.<cls_name>(transformers.<config_name>(**config)), its sub-module `part`."""
    def make():
        import torch
        import transformers

        torch.manual_seed(SEED)
        model = getattr(transformers, cls_name)(getattr(transformers, config_name)(**config))
        model = getattr(model, part) if part else model
        return model.eval(), inputs()
    return make


def _cases() -> list[Case]:
    tokens = dict(bos_token_id=0, pad_token_id=1, eos_token_id=2)  # the defaults lie outside the small vocabulary
    text = dict(vocab_size=VOCAB, max_position_embeddings=64, **tokens, **SMALL)
    vision = dict(image_size=IMAGE, patch_size=8, num_channels=3, **SMALL)
    seq2seq = dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                   decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, decoder_start_token_id=0,
                   **tokens)
    whisper_frames = 32  # the encoder's convolutions halve it; max_source_positions must equal the result

    def audio_inputs():
        rng = np.random.default_rng(SEED)
        return {"input_values": rng.standard_normal((1, 400)).astype(np.float32)}

    def whisper_inputs():
        rng = np.random.default_rng(SEED)
        return {"input_features": rng.standard_normal((1, 16, whisper_frames)).astype(np.float32)}

    return [
        Case("bert", _model("BertModel", "BertConfig", _text_inputs, **text), wasm=True, fast=True),
        Case("distilbert", _model("DistilBertModel", "DistilBertConfig", _text_inputs, vocab_size=VOCAB, dim=32,
                                  pad_token_id=1, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64)),
        Case("roberta", _model("RobertaModel", "RobertaConfig", _text_inputs,
                               **{**text, "max_position_embeddings": 66})),
        Case("albert", _model("AlbertModel", "AlbertConfig", _text_inputs, embedding_size=16, **text)),
        Case("electra", _model("ElectraModel", "ElectraConfig", _text_inputs, embedding_size=16, **text)),
        Case("gpt2", _model("GPT2Model", "GPT2Config", _text_inputs, vocab_size=VOCAB, **tokens,
                            n_embd=32, n_layer=2, n_head=2, n_positions=64, use_cache=False), fast=True),
        Case("llama", _model("LlamaForCausalLM", "LlamaConfig", _text_inputs,
                             num_key_value_heads=1, use_cache=False, **text), wasm=True),
        Case("t5_encoder", _model("T5EncoderModel", "T5Config", _text_inputs, vocab_size=VOCAB, d_model=32, d_kv=16,
                                  d_ff=64, num_layers=2, num_heads=2)),
        Case("bart_encoder", _model("BartModel", "BartConfig", _text_inputs, part="encoder",
                                    max_position_embeddings=64, **seq2seq)),
        Case("whisper_encoder", _model("WhisperModel", "WhisperConfig", whisper_inputs, part="encoder",
                                       num_mel_bins=16, max_source_positions=whisper_frames // 2,
                                       max_target_positions=16, **seq2seq)),
        Case("vit", _model("ViTModel", "ViTConfig", _image_inputs, **vision), wasm=True),
        Case("clip_text", _model("CLIPTextModel", "CLIPTextConfig", lambda: _text_inputs(mask=False),
                                 **{**text, "max_position_embeddings": 16})),
        Case("clip_vision", _model("CLIPVisionModel", "CLIPVisionConfig", _image_inputs, **vision)),
        Case("wav2vec2", _model("Wav2Vec2Model", "Wav2Vec2Config", audio_inputs, conv_dim=(16, 16),
                                conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                num_conv_pos_embedding_groups=2, **SMALL), wasm=True),
        Case("gpt_neox", _model("GPTNeoXForCausalLM", "GPTNeoXConfig", _text_inputs, use_cache=False, **text)),
        Case("qwen2", _model("Qwen2ForCausalLM", "Qwen2Config", _text_inputs, num_key_value_heads=1,
                             use_cache=False, **text)),
        Case("opt", _model("OPTModel", "OPTConfig", _text_inputs, vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, ffn_dim=64, word_embed_proj_dim=32, max_position_embeddings=64,
                           use_cache=False, **tokens)),
        Case("bloom", _model("BloomModel", "BloomConfig", _text_inputs, vocab_size=VOCAB, hidden_size=32, n_layer=2,
                             n_head=2, use_cache=False, **tokens)),
        Case("deberta_v2", _model("DebertaV2Model", "DebertaV2Config", _text_inputs, **text)),
        Case("mobilebert", _model("MobileBertModel", "MobileBertConfig", _text_inputs, embedding_size=16,
                                  intra_bottleneck_size=16, num_feedforward_networks=2, **text)),
        Case("mpnet", _model("MPNetModel", "MPNetConfig", _text_inputs, **{**text, "max_position_embeddings": 66})),
        Case("swin", _model("SwinModel", "SwinConfig", _image_inputs, image_size=IMAGE, patch_size=4, embed_dim=16,
                            depths=[1, 1], num_heads=[2, 2], window_size=4)),
        Case("convnext", _model("ConvNextModel", "ConvNextConfig", _image_inputs, num_channels=3, num_stages=2,
                                hidden_sizes=[8, 16], depths=[1, 1], image_size=IMAGE)),
        Case("segformer", _model("SegformerModel", "SegformerConfig", _image_inputs, num_encoder_blocks=2,
                                 depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[8, 16], num_attention_heads=[1, 2],
                                 patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2], decoder_hidden_size=16)),
    ]


class _FirstOutput:
    """Wraps a transformers model so the export sees positional tensors in and one tensor out (the first
    field of its ModelOutput: last_hidden_state or logits)."""

    def __new__(cls, model, names):
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *args):
                out = self.model(**dict(zip(names, args)), return_dict=True)
                return out[0]

        return Wrapper().eval()


def export(case: Case, exporter: str, path: Path, options: ExportOptions = ExportOptions()) -> dict[str, np.ndarray]:
    """Exports the case's model to `path` (at fixed shapes unless options.dynamic); returns its inputs."""
    import torch

    model, feeds = case.make()
    if options.attention:
        model.set_attn_implementation(options.attention)
    names = list(feeds)
    dynamic = {name: {0: "batch", **({1: "seq"} if value.dtype.kind == "i" else {})} for name, value in feeds.items()}
    wrapped = _FirstOutput(model, names)
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    quiet = io.StringIO()
    with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(quiet), \
            contextlib.redirect_stderr(quiet):
        warnings.simplefilter("ignore")
        if exporter == "legacy":
            torch.onnx.export(wrapped, args, str(path), input_names=names, output_names=["output"],
                              opset_version=options.opset, dynamo=False,
                              dynamic_axes=dynamic if options.dynamic else None)
        else:
            torch.onnx.export(wrapped, args, str(path), input_names=names, output_names=["output"],
                              opset_version=max(options.opset, 18), dynamo=True, external_data=False,
                              optimize=exporter == "dynamo")
    return feeds


def run_case(case: Case, exporter: str, targets: list[str], work: Path,
             options: ExportOptions = ExportOptions()) -> list[Result]:
    """Export with one exporter, build for each target, run, compare; one Result per target."""
    import onnx

    results = [Result(case.name, exporter, t) for t in targets]
    path = work / f"{case.name}-{exporter}.onnx"
    try:
        feeds = export(case, exporter, path, options)
    except ImportError as exc:
        for r in results:
            r.reason = f"not installed: {exc.name or exc}"
        return results
    except Exception as exc:  # the exporter's own failure: reported, not ours to fix
        for r in results:
            r.status, r.reason = "export failed", one_line(exc)
        return results
    declared = {i.name for i in onnx.load(str(path)).graph.input}
    feeds = {k: v for k, v in feeds.items() if k in declared}  # an exporter may drop an input it never reads
    return check_export(path, feeds, results, work, RTOL, ATOL)


def summary(results: list[Result]) -> str:
    return pass_summary(results, "the exports")


def select(fast: bool = False, only: list[str] | None = None) -> list[Case]:
    return select_cases(_cases(), fast, only)


def sweep(cases: list[Case], exporters: list[str], targets: list[str], work: Path, progress=None,
          options: ExportOptions = ExportOptions()) -> list[Result]:
    return sweep_cases([(c, e) for c in cases for e in exporters],
                       lambda case, exporter, wanted: run_case(case, exporter, wanted, work, options),
                       targets, progress, name_width=16)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sweep.hf_models", description=__doc__.split("\n\n")[0])
    cli.add_target_arguments(p, EXPORTERS, ALL_EXPORTERS)
    p.add_argument("--opset", type=int, default=OPSET, help=f"the legacy exporter's opset [{OPSET}]")
    p.add_argument("--attention", help="transformers' attn_implementation, e.g. eager [its default, sdpa]")
    p.add_argument("--dynamic", action="store_true", help="legacy: export batch and sequence as named dims, "
                                                           "set at build time with --dim")
    cli.add_case_arguments(p, "models and builds")
    args = p.parse_args(argv)
    cases = select(args.fast, cli.case_names(args.only))
    exporters = cli.exporter_names(args.exporters, ALL_EXPORTERS)
    with cli.work_folder(args.work) as work:
        results = sweep(cases, exporters, cli.names(args.targets), work,
                        progress=lambda line: print(line, file=sys.stderr, flush=True),
                        options=ExportOptions(args.opset, args.attention, args.dynamic))
    text = f"{table(results)}\n\n{summary(results)}\n\nVersions: {versions(VERSIONS)}\n"
    return cli.finish(results, text, args.markdown, "Hugging Face transformers sweep",
                      f"python -m benchmarks.sweep.hf_models --markdown {args.markdown}")


if __name__ == "__main__":
    sys.exit(main())
