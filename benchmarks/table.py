"""The markdown table of a benchmark run: medians per native SIMD level and wasm32, ratios (mlcc / reference:
below 1 means mlcc is faster), their geometric means and the share of this core's measured peak per level."""

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


def _latency(cell: dict | None, what: str, notes: Notes, key: str = "median_ms") -> str:
    if cell is None:
        return "-"
    if "error" in cell:
        return f"fails [{notes.add(what + ': ' + cell['error'])}]"
    text = _ms(cell.get(key, cell["median_ms"]))
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


def cpu_ratio(a: dict | None, b: dict | None) -> float | None:
    """The same over CPU-time medians (mlcc wasm32: its thread's; onnxruntime-web: node's process's)."""
    if ratio(a, b) is None or "cpu_median_ms" not in a or "cpu_median_ms" not in b:
        return None
    return a["cpu_median_ms"] / b["cpu_median_ms"]


def host_ratio(mlcc: dict | None, ort: dict | None) -> float | None:
    """A native level's ratio to onnxruntime: of thread CPU medians where the run has them (interleaved,
    benchmarks/__main__.py time_host), else of the wall medians (results of earlier runs)."""
    if ratio(mlcc, ort) is not None and "cpu_ratio" in mlcc:
        return mlcc["cpu_ratio"]
    return ratio(mlcc, ort)


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _ratio_text(r: float | None) -> str:
    return "-" if r is None else f"**{r:.2f}**" if r <= 1 else f"{r:.2f}"


def row_summary(row: dict) -> str:
    cells = [("ort", row.get("ort"))] + [(level, n.get("mlcc")) for level, n in (row.get("native") or {}).items()]
    cells += [("wasm", row.get("wasm")), ("v8", row.get("v8")), ("web", row.get("web"))]
    q = row.get("int8") or {}
    cells += [(f"int8 {key}", q.get(key)) for key in ("mlcc", "ort", "fp32", "wasm", "web")]
    parts = [f"{key} {_ms(cell['median_ms'])} ms" if "median_ms" in cell else f"{key} fails"
             for key, cell in cells if cell]
    return ", ".join(parts) or row.get("error", "nothing measured")


def markdown(results: dict) -> str:
    env, peak, levels = results["environment"], results["peak_gflops"], results["levels"]
    notes = Notes()
    head_cells = ["model", "GFLOP", "ORT ms"]
    for level in levels:
        head_cells += [f"{level} ms", f"{level} / ORT"]
    head_cells += ["mlcc wasm ms", "ORT-web ms", "wasm/web", "wasm/web CPU", "V8/web CPU"]
    head_cells += [f"{level} % of peak" for level in levels]
    lines = ["| " + " | ".join(head_cells) + " |", "|---|" + "---:|" * (len(head_cells) - 1)]
    native: dict[str, list[float]] = {level: [] for level in levels}
    web, web_cpu, v8_cpu, paired, gemm_best = [], [], [], {level: [] for level in levels}, {}
    for row in results["rows"]:
        if "error" in row:
            lines.append(f"| {row['model']} | fails [{notes.add(row['model'] + ': ' + row['error'])}] |"
                         + " - |" * (len(head_cells) - 2))
            continue
        flops = row.get("flops") or 0
        cells = [f"| {row['model']}", f"{flops / 1e9:.3f}" if flops else "?",
                 _latency(row.get("ort"), f"{row['model']} onnxruntime", notes, "cpu_median_ms")]
        shares = []
        for level, isa in levels.items():
            got = row["native"].get(level) or {}
            mlcc = got.get("mlcc")
            r = host_ratio(mlcc, row.get("ort"))
            if r and row["model"] != GEMM:
                native[level].append(r)
            cells += [_latency(mlcc, f"{row['model']} mlcc {level}", notes, "cpu_median_ms"), _ratio_text(r)]
            ms = mlcc.get("cpu_median_ms", mlcc.get("median_ms")) if mlcc else None
            rate = flops / (ms * 1e6) if flops and ms else None
            core_peak = peak.get(isa) if "error" not in peak else None
            row_peak = got.get("paired_peak_gflops") or core_peak
            if rate and got.get("paired_peak_gflops"):
                paired[level].append(got["paired_peak_gflops"])
            if row["model"] == GEMM and rate and core_peak:
                gemm_best[level] = 100 * rate / core_peak
            shares.append(f"{100 * rate / row_peak:.0f}%" if rate and row_peak else "-")
        r_web = ratio(row.get("wasm"), row.get("web"))
        r_web_cpu = cpu_ratio(row.get("wasm"), row.get("web"))
        if r_web and row["model"] != GEMM:
            web.append(r_web)
        if r_web_cpu and row["model"] != GEMM:
            web_cpu.append(r_web_cpu)
        # the same module in V8, onnxruntime-web's engine (checked in wasmtime: the wasm/web cells' run)
        r_v8_cpu = cpu_ratio(row.get("v8"), row.get("web")) if r_web_cpu else None
        if r_v8_cpu and row["model"] != GEMM:
            v8_cpu.append(r_v8_cpu)
        cells += [_latency(row.get("wasm"), f"{row['model']} mlcc wasm32", notes),
                  _latency(row.get("web"), f"{row['model']} onnxruntime-web", notes), _ratio_text(r_web),
                  _ratio_text(r_web_cpu), _ratio_text(r_v8_cpu), *shares]
        lines.append(" | ".join(cells) + " |")
    means = ["| **geometric mean** (models, " + GEMM + " left out)", "", ""]
    for level in levels:
        means += ["", f"{_ratio_text(geomean(native[level]))} ({len(native[level])})"]
    means += ["", "", f"{_ratio_text(geomean(web))} ({len(web)})", f"{_ratio_text(geomean(web_cpu))} ({len(web_cpu)})",
              f"{_ratio_text(geomean(v8_cpu))} ({len(v8_cpu)})" if v8_cpu else ""]
    means += [""] * len(levels)
    lines.append(" | ".join(means) + " |")
    peak_text = ", ".join(f"{k} {v:.1f} GFLOP/s" for k, v in peak.items()) if "error" not in peak else peak["error"]
    paired_text = "; ".join(f"{level}'s ({levels[level]}) read {min(v):.0f}-{max(v):.0f} GFLOP/s"
                            for level, v in paired.items() if v)
    gemm_text = ", ".join(f"{level} {v:.0f}%" for level, v in gemm_best.items())
    head = [
        f"# mlcc benchmarks: {env['date']}",
        "",
        f"- machine: {env['cpu']}, {env['cores']} cores, one used; load average {_load(env['load_average'])} at the start, "
        f"{_load(env.get('load_average_end'))} at the end",
        f"- single-core fp32 peak measured (benchmarks/peak.c, FMA loop, the best of 200 runs of 1 ms): {peak_text}",
        f"- mlcc is built and timed for each SIMD level this machine runs ({', '.join(f'{k}: {v}' for k, v in levels.items())}); "
        "onnxruntime picks its kernels from the CPU's own flags (MLAS reads cpuid; no option caps it), so every "
        "level is compared with onnxruntime on this CPU's best ISA",
        f"- % of peak: a level's median rate over its ISA's FMA loop's median rate measured right before and after "
        f"each of its rounds ({results.get('paired_peak_runs', '?')} runs of 1 ms each time), so both see the machine's "
        f"load of the moment (the best case where none was paired)"
        + (f"; those paired peaks: {paired_text}" if paired_text else "")
        + (f"; against the best-case peak above, {GEMM} is at {gemm_text}" if gemm_text else ""),
        f"- mlcc {env['mlcc']} ({env['commit']}); onnxruntime {env['onnxruntime']} "
        f"(CPU, 1 thread, sequential, all graph optimisations); wasmtime {env['wasmtime']}; "
        + (f"onnxruntime-web **skipped** ({env['web_note']})" if env.get("web_note") else
           f"onnxruntime-web {_web_version(results)} under node {env['node']} (wasm, 1 thread, SIMD)"),
        *([f"- native (ORT ms, each level's ms and / ORT): thread CPU time, medians of timed runs; onnxruntime and "
           "every level each loaded once, then run interleaved: short turns in rotation, each about "
           f"{1e3 * timing['turn_s']:g} ms of runs (at most {timing['turn_runs']}; one run for a model slower than "
           "that, after one untimed run that puts the side's weights back in the caches), until each side has had "
           f"about {results['budget_s']:g} s (at most {timing['max_runs']} runs); so a slow spell of this shared VM "
           "falls on every side alike, and CPU time leaves out the time a loaded machine deschedules either side "
           f"(wall-time medians, and each ratio in {timing['blocks']} consecutive stretches of the run, are in the "
           ".json)"] if (timing := results.get("host_timing")) else []),
        f"- {'wasm32: ' if results.get('host_timing') else ''}medians of timed runs after warm-up (about "
        f"{results['budget_s']:g} s per measurement"
        + (f", in {results['rounds']} rounds alternating mlcc and its peer: the median of the rounds' medians"
           if results.get("rounds", 1) > 1 else "") + "); ratios are "
        "mlcc / reference, **bold** where mlcc is faster; mlcc native and wasm32 are timed inside the compiled code, "
        "onnxruntime around session.run (Python), onnxruntime-web around session.run (node); wasm/web CPU is "
        "the same ratio in CPU time (mlcc's thread in wasmtime, node's whole process, V8's helper threads "
        "included), which a loaded machine's descheduling does not inflate; V8/web CPU times the same wasm32 "
        "module through mlcc's ES module under node, in V8 as onnxruntime-web (node's process CPU both sides): "
        "one engine for both, where wasmtime's Cranelift and V8 compile the module differently",
        "- a latency counts only if the outputs match onnxruntime (rtol 1e-2, atol 1e-3)",
        "- GFLOP counts direct convolution's multiply-adds; mlcc runs 3x3 stride-1 and 5x5 stride-1 and -2 "
        "convolutions as Winograd F(4x4, 3x3), a quarter (0.36 for 5x5) of them, so % of peak is an "
        "effective rate, not the hardware's",
        "",
    ]
    if results.get("int8_only"):
        lines = []
    int8_lines = int8_table(results, notes)
    foot = ["", *(f"[{i}] {text}" for i, text in enumerate(notes.items, 1))] if notes.items else []
    return "\n".join(head + lines + int8_lines + foot) + "\n"


def _bytes_ratio(sizes: dict, a: str, b: str, what: str) -> float | None:
    x, y = (sizes.get(a) or {}).get(what), (sizes.get(b) or {}).get(what)
    return x / y if x is not None and y else None  # 0: no arena at all (left out of the geometric mean)


def _cpu_ratio(a: dict | None, b: dict | None) -> float | None:
    """a / b in CPU time where both have it (steadier than wall time on a loaded machine), else wall time."""
    if a and b and "cpu_median_ms" in a and "cpu_median_ms" in b and a.get("check") != "MISMATCH":
        return a["cpu_median_ms"] / b["cpu_median_ms"]
    return ratio(a, b)


def _cpu_latency(cell: dict | None, what: str, notes: Notes) -> str:
    text = _latency(cell, what, notes)
    return f"{text} ({_ms(cell['cpu_median_ms'])})" if cell and "cpu_median_ms" in cell and "error" not in cell else text


def int8_table(results: dict, notes: Notes) -> list[str]:
    """The int8 rows (benchmarks/int8.py's quantization): mlcc int8 against onnxruntime int8 and mlcc fp32 on
    one native level, wasm32 against onnxruntime-web int8, and the int8 build's bytes over the fp32 one's."""
    rows = [row for row in results["rows"] if row.get("int8")]
    if not rows:
        return []
    level = rows[0]["int8"]["level"]
    head = ["model", "quantized", f"mlcc int8 ms ({level})", "ORT int8 ms", "int8 / ORT int8", "mlcc fp32 ms",
            "int8 / fp32", "wasm32 int8 ms", "ORT-web int8 ms", "wasm / web", "wasm int8 / fp32",
            "arena int8 / fp32", "weights int8 / fp32", "max abs err vs exact"]
    lines = ["", f"## int8 ({level} and wasm32)", "",
             "Each model quantized by onnxruntime.quantization (benchmarks/int8.py: QDQ static, per-channel int8 "
             "weights, uint8 activations, 4 seeded calibration batches; the BERT encoder dynamically). mlcc int8, "
             "onnxruntime int8 (1 thread, all optimisations) and mlcc fp32 alternate round by round, as do mlcc "
             "wasm32 int8, its fp32 build and onnxruntime-web int8; int8 latencies are not checked against "
             "onnxruntime's optimised int8 outputs (its fused kernels are not exact); the last column is the "
             "largest difference of mlcc's int8 outputs from onnxruntime without graph optimisation (the exact "
             "integer semantics). Latencies: wall-time medians, with the CPU-time median in parentheses where there is "
             "one (mlcc's thread, node's process); ratios between two cells that both have CPU time use it (a loaded "
             "machine stretches wall time by waits), int8 / ORT int8 the wall times (onnxruntime is timed around "
             "session.run). Bytes: the native builds (arena, weights; an int8 arena of 0 bytes, every intermediate in "
             "the output's buffer, shows 0.00 and is left out of the geometric mean).", "",
             "| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    columns: dict[str, list[float]] = {}
    for row in rows:
        q = row["int8"]
        if "error" in q:
            lines.append(f"| {row['model']} | fails [{notes.add(row['model'] + ' int8: ' + q['error'])}] |"
                         + " - |" * (len(head) - 2))
            continue
        named = {"int8 / ORT int8": ratio(q.get("mlcc"), q.get("ort")), "int8 / fp32": _cpu_ratio(q.get("mlcc"), q.get("fp32")),
                 "wasm / web": _cpu_ratio(q.get("wasm"), q.get("web")),
                 "wasm int8 / fp32": _cpu_ratio(q.get("wasm"), q.get("wasm_fp32")),
                 "arena int8 / fp32": _bytes_ratio(q["bytes"], "int8", "fp32", "arena"),
                 "weights int8 / fp32": _bytes_ratio(q["bytes"], "int8", "fp32", "weights")}
        for key, value in named.items():
            if value:
                columns.setdefault(key, []).append(value)
        err = q.get("max_abs_err_vs_exact")
        lines.append(" | ".join([
            f"| {row['model']}", q["scheme"], _cpu_latency(q.get("mlcc"), f"{row['model']} mlcc int8", notes),
            _latency(q.get("ort"), f"{row['model']} onnxruntime int8", notes), _ratio_text(named["int8 / ORT int8"]),
            _cpu_latency(q.get("fp32"), f"{row['model']} mlcc fp32", notes), _ratio_text(named["int8 / fp32"]),
            _cpu_latency(q.get("wasm"), f"{row['model']} mlcc wasm32 int8", notes),
            _cpu_latency(q.get("web"), f"{row['model']} onnxruntime-web int8", notes), _ratio_text(named["wasm / web"]),
            _ratio_text(named["wasm int8 / fp32"]), _ratio_text(named["arena int8 / fp32"]),
            _ratio_text(named["weights int8 / fp32"]), "-" if err is None else f"{err:.3g}"]) + " |")
    means = ["| **geometric mean**", "", "", ""]
    for key in head[4:-1]:
        if key in ("mlcc fp32 ms", "wasm32 int8 ms", "ORT-web int8 ms"):
            means.append("")
        else:
            values = columns.get(key, [])
            means.append(f"{_ratio_text(geomean(values))} ({len(values)})")
    lines.append(" | ".join([*means, ""]) + " |")
    return lines


def _load(values) -> str:
    return "/".join(f"{v:.1f}" for v in values) if values else "?"


def _web_version(results: dict) -> str:
    cells = [cell for row in results["rows"] for cell in (row.get("web"), (row.get("int8") or {}).get("web"))]
    return next((cell["version"] for cell in cells if "version" in (cell or {})), "?")
