"""python -m benchmarks.boards: the MLPerf Tiny models in fp32 on the emulated Cortex-M boards. Builds each
for cortex-m4 (mps2-an386) and cortex-m55 (mps3-an547), runs it once under qemu-system-arm against
onnxruntime, and prints a markdown table of what a part must hold: flash and RAM of the linked firmware
image (the model, its kernels, startup and harness after --gc-sections; RAM = arena + I/O buffers + data +
the run's stack), the arena, and the run function's stack (static bound from report.json, and as measured
by painting on the board). Writes it to benchmarks/results/boards.md.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.models import SUITE
from mlcc import runners
from mlcc.pipeline import BuildOptions, build
from mlcc.verify import compare, reference_outputs

MODELS = ["ds_cnn_kws", "resnet8", "mobilenet_v1_025_vww", "fc_autoencoder"]
TARGETS = {"cortex-m4": "mps2-an386", "cortex-m55": "mps3-an547"}
RESULTS = Path(__file__).resolve().parent / "results" / "boards.md"


def measure(model_name: str, target: str, folder: Path) -> dict:
    import onnx

    proto = SUITE[model_name]()
    path = folder / f"{model_name}.onnx"
    onnx.save(proto, str(path))
    out, report = build(path, BuildOptions(target=target, out_dir=folder / f"{model_name}-{target}"))
    rng = np.random.default_rng(0)
    feeds = {i["name"]: rng.standard_normal(i["shape"]).astype(i["dtype"]) for i in report["inputs"]}
    loaded = runners.load(out)
    got = loaded.run(feeds)
    expected, _ = reference_outputs(path, feeds, list(got))
    ok = all(compare(got[k], expected[k], 1e-4, 1e-5).ok for k in got)
    image = report["size"]["artifacts"]["firmware"]
    return {"model": model_name, "target": target, "ok": ok, "flash": image["flash_bytes"], "ram": image["ram_bytes"],
            "arena": report["arena_bytes"], "weights": report["weights_bytes"], "stack": report["size"]["stack_bytes"],
            "stack_measured": loaded.stack_bytes}


def render(rows: list[dict]) -> str:
    lines = ["| model | target (board) | flash B | RAM B | arena B | stack B (static / measured) | matches onnxruntime |",
             "|---|---|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['target']} ({TARGETS[r['target']]}) | {r['flash']:,} | {r['ram']:,} | "
                     f"{r['arena']:,} | {r['stack']:,} / {r['stack_measured']:,} | {'yes' if r['ok'] else 'NO'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlcc-boards-") as tmp:
        for model_name in MODELS:
            for target in TARGETS:
                rows.append(measure(model_name, target, Path(tmp)))
                print(rows[-1], file=sys.stderr)
    text = render(rows)
    RESULTS.write_text(text)
    print(text)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
