"""The markdown table of a benchmark run: medians, ratios (mlcc / reference: below 1 means mlcc is faster),
their geometric means, achieved GFLOP/s and the share of this core's measured peak."""

from __future__ import annotations

import math

GEMM = "gemm_1024"


class Notes:
    """Numbered footnotes for cells that failed or did not check out."""

    def __init__(self):
        self.items: list[str] = []

    def add(self, text: str) -> int:
        if text not in self.items:
            self.items.append(text)
        return self.items.index(text) + 1


def _latency(cell: dict | None, what: str, notes: Notes) -> str:
    if cell is None:
        return "-"
    if "error" in cell:
        return f"fails [{notes.add(what + ': ' + cell['error'])}]"
    text = _ms(cell["median_ms"])
    if cell.get("check") == "MISMATCH":
        err = cell["max_abs_err"]
        text += f" ✗ [{notes.add(f'{what}: outputs differ from onnxruntime (max abs err {err:.3g})')}]"
    return text


def _ms(ms: float) -> str:
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}" if ms < 100 else f"{ms:.0f}"


def ratio(a: dict | None, b: dict | None) -> float | None:
    if not a or not b or "median_ms" not in a or "median_ms" not in b or a.get("check") == "MISMATCH":
        return None
    return a["median_ms"] / b["median_ms"]


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _ratio_text(r: float | None) -> str:
    return "-" if r is None else f"**{r:.2f}**" if r <= 1 else f"{r:.2f}"


def row_summary(row: dict) -> str:
    parts = []
    for key in ("mlcc", "ort", "wasm", "web"):
        cell = row.get(key)
        if cell:
            parts.append(f"{key} {_ms(cell['median_ms'])} ms" if "median_ms" in cell else f"{key} fails")
    return ", ".join(parts) or row.get("error", "nothing measured")


def markdown(results: dict) -> str:
    env, peak, isa = results["environment"], results["peak_gflops"], results["host_isa"]
    core_peak = peak.get(isa) if isinstance(peak, dict) else None
    notes = Notes()
    lines = [
        "| model | GFLOP | mlcc ms | ORT ms | mlcc/ORT | mlcc wasm ms | ORT-web ms | wasm/web | mlcc GFLOP/s | % of peak |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    native, web, paired, gemm_best = [], [], [], None
    for row in results["rows"]:
        if "error" in row:
            lines.append(f"| {row['model']} | fails [{notes.add(row['model'] + ': ' + row['error'])}] |" + " - |" * 8)
            continue
        flops = row.get("flops") or 0
        r_native, r_web = ratio(row.get("mlcc"), row.get("ort")), ratio(row.get("wasm"), row.get("web"))
        if row["model"] != GEMM:
            native += [r_native] if r_native else []
            web += [r_web] if r_web else []
        mlcc = row.get("mlcc") or {}
        rate = flops / (mlcc["median_ms"] * 1e6) if flops and "median_ms" in mlcc else None
        paired_peak = row.get("paired_peak_gflops")
        row_peak = paired_peak or core_peak
        if rate and paired_peak:
            paired.append(paired_peak)
        if row["model"] == GEMM and rate and core_peak:
            gemm_best = 100 * rate / core_peak
        lines.append(" | ".join([
            f"| {row['model']}", f"{flops / 1e9:.3f}" if flops else "?",
            _latency(row.get("mlcc"), f"{row['model']} mlcc host", notes),
            _latency(row.get("ort"), f"{row['model']} onnxruntime", notes), _ratio_text(r_native),
            _latency(row.get("wasm"), f"{row['model']} mlcc wasm32", notes),
            _latency(row.get("web"), f"{row['model']} onnxruntime-web", notes), _ratio_text(r_web),
            f"{rate:.1f}" if rate else "-",
            f"{100 * rate / row_peak:.0f}%" if rate and row_peak else "-",
        ]) + " |")
    g_native, g_web = geomean(native), geomean(web)
    lines.append(f"| **geometric mean** (models, {GEMM} left out) | | | | "
                 f"{_ratio_text(g_native)} ({len(native)}) | | | {_ratio_text(g_web)} ({len(web)}) | | |")
    peak_text = ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peak.items()) if "error" not in peak else peak["error"]
    head = [
        f"# mlcc benchmarks: {env['date']}",
        "",
        f"- machine: {env['cpu']}, {env['cores']} cores, one used; load average {_load(env['load_average'])} at the start, "
        f"{_load(env.get('load_average_end'))} at the end",
        f"- single-core fp32 peak measured (benchmarks/peak.c, FMA loop, the best of 200 runs of 1 ms): {peak_text}",
        f"- % of peak: mlcc host's median rate over the {isa} FMA loop's median rate measured right before and after "
        f"each of its rounds ({results.get('paired_peak_runs', '?')} runs of 1 ms each time), so both see the machine's "
        f"load of the moment (the best case where none was paired)"
        + (f"; that paired peak read {min(paired):.0f}-{max(paired):.0f} GFLOP/s across the models" if paired else "")
        + (f"; against the best-case peak above, {GEMM} is at {gemm_best:.0f}%" if gemm_best else ""),
        f"- mlcc {env['mlcc']} ({env['commit']}), host target {env['host_target']}; onnxruntime {env['onnxruntime']} "
        f"(CPU, 1 thread, sequential, all graph optimisations); wasmtime {env['wasmtime']}; "
        f"onnxruntime-web {_web_version(results)} under node {env['node']} (wasm, 1 thread, SIMD)"
        + (f": **skipped, {env['web_note']}**" if env.get("web_note") else ""),
        f"- medians of timed runs after warm-up (about {results['budget_s']:g} s per measurement"
        + (f", in {results['rounds']} rounds alternating mlcc and its peer: the median of the rounds' medians"
           if results.get("rounds", 1) > 1 else "") + "); ratios are "
        "mlcc / reference, **bold** where mlcc is faster; mlcc host and wasm32 are timed inside the compiled code, "
        "onnxruntime around session.run (Python), onnxruntime-web around session.run (node)",
        "- a latency counts only if the outputs match onnxruntime (rtol 1e-2, atol 1e-3)",
        "- GFLOP counts direct convolution's multiply-adds; mlcc runs 3x3 stride-1 and 5x5 stride-1 and -2 "
        "convolutions as Winograd F(4x4, 3x3), a quarter (0.36 for 5x5) of them, so GFLOP/s and % of peak are "
        "effective rates, not the hardware's",
        "",
    ]
    foot = ["", *(f"[{i}] {text}" for i, text in enumerate(notes.items, 1))] if notes.items else []
    return "\n".join(head + lines + foot) + "\n"


def _load(values) -> str:
    return "/".join(f"{v:.1f}" for v in values) if values else "?"


def _web_version(results: dict) -> str:
    return next((row["web"]["version"] for row in results["rows"] if "version" in (row.get("web") or {})), "?")
