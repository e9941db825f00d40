"""NAME.mjs for wasm32 builds: an ES module that loads NAME.wasm (browsers and Node alike) and runs it.

The memory layout run() uses is computed here, the same as mlcc/runners/wasm.py's: pointer tables, inputs,
outputs, then the arena, each 64-byte aligned, from the first aligned address past __heap_base.
"""

from __future__ import annotations

import json
from math import prod
from pathlib import Path

from . import __version__
from .render import render

ALIGN = 64

# element type -> typed array class (float16 as raw IEEE half bits; bool as 0/1 bytes)
_ARRAY_TYPE = {
    "float32": "Float32Array", "float64": "Float64Array", "float16": "Uint16Array",
    "int8": "Int8Array", "int16": "Int16Array", "int32": "Int32Array", "int64": "BigInt64Array",
    "uint8": "Uint8Array", "uint16": "Uint16Array", "uint32": "Uint32Array", "uint64": "BigUint64Array",
    "bool": "Uint8Array",
}


def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


def memory_layout(inputs: list[dict], outputs: list[dict], arena_bytes: int, dims: int = 0) -> dict:
    """Byte offsets from the aligned heap base; tensors are report.json entries (name, dtype, shape: the
    largest). With `dims` run-time dimensions, NAME_dims and the output shapes NAME_run_dims writes follow
    the pointer tables."""
    cursor = 0
    input_table, cursor = cursor, _align(cursor + 4 * max(len(inputs), 1))
    output_table, cursor = cursor, _align(cursor + 4 * max(len(outputs), 1))
    offsets = {}
    if dims:
        offsets["dims"], cursor = cursor, _align(cursor + 4 * dims)
        offsets["shapes"], cursor = cursor, _align(cursor + 4 * max(sum(len(t["shape"]) for t in outputs), 1))
    for kind, tensors in (("inputs", inputs), ("outputs", outputs)):
        offsets[kind] = []
        for t in tensors:
            offsets[kind].append(cursor)
            cursor = _align(cursor + _nbytes(t))
    arena, end = cursor, cursor + max(arena_bytes, 1)
    return dict(input_table=input_table, output_table=output_table, arena=arena, end=end, **offsets)


def _nbytes(tensor: dict) -> int:
    from numpy import dtype

    return prod(tensor["shape"]) * dtype(tensor["dtype"]).itemsize


def _js_tensor(t: dict) -> str:
    shape = ", ".join(str(d) for d in t["shape"])
    dims = f"dims: Object.freeze({json.dumps(t['dims'])}), " if "dims" in t else ""
    return (f"{{ name: {json.dumps(t['name'])}, dtype: {json.dumps(t['dtype'])}, "
            f"shape: Object.freeze([{shape}]), {dims}size: {prod(t['shape'])} }}")


# A threads build (target thread_pool "wasm-workers"): each worker's stack, past the layout, and the most
# threads the shared memory's maximum makes room for. A task's deepest frame is a GEMM's packed A (64 KiB).
WORKER_STACK_BYTES = 1 << 20
MAX_THREADS = 16


def write_module(out_dir: Path, name: str, source: str, graph, arena_bytes: int, variables=(),
                 memory_pages: tuple[int, int] | None = None) -> str:
    """Write out_dir/NAME.mjs for the graph's inputs and outputs; returns the file name. memory_pages: a
    threads build's shared memory (initial, maximum) as linked; its module is written again once linked."""
    from .report import tensor_info

    inputs = [tensor_info(v) for v in graph.inputs]
    outputs = [tensor_info(v, n) for v, n in zip(graph.outputs, graph.output_names)]
    (out_dir / f"{name}.mjs").write_text(render_module(name, source, inputs, outputs, arena_bytes, variables,
                                                       memory_pages))
    return f"{name}.mjs"


def heap_bytes(graph, arena_bytes: int, variables=()) -> int:
    """Bytes a threads build's NAME.mjs uses past __heap_base: the layout, at most MAX_THREADS - 1 workers'
    stacks, and the alignments of both (what the shared memory's maximum adds to the static data)."""
    from .report import tensor_info

    inputs = [tensor_info(v) for v in graph.inputs]
    outputs = [tensor_info(v, n) for v, n in zip(graph.outputs, graph.output_names)]
    layout = memory_layout(inputs, outputs, arena_bytes, len(variables))
    return ALIGN + layout["end"] + 16 + (MAX_THREADS - 1) * WORKER_STACK_BYTES


def render_module(name: str, source: str, inputs: list[dict], outputs: list[dict], arena_bytes: int,
                  variables=(), memory_pages: tuple[int, int] | None = None) -> str:
    """NAME.mjs's text; with memory_pages, a threads build's (a shared memory and a pool of workers)."""
    layout = memory_layout(inputs, outputs, arena_bytes, len(variables))
    dims = [dict(name=json.dumps(v.name), low=v.low, high=v.high) for v in variables]
    example_feed = ", ".join(f"{json.dumps(t['name'])}: new {_ARRAY_TYPE[t['dtype']]}({prod(t['shape'])})" for t in inputs)
    return render(
        "model.mjs.j2", name=name, version=__version__, source=source, arena_bytes=arena_bytes,
        name_literal=json.dumps(name), wasm_literal=json.dumps(f"{name}.wasm"),
        entry=f"{name}_run_dims" if dims else f"{name}_run_v", dims=dims,
        inputs=[_js_tensor(t) for t in inputs], outputs=[_js_tensor(t) for t in outputs],
        input_offsets=", ".join(map(str, layout["inputs"])), output_offsets=", ".join(map(str, layout["outputs"])),
        layout=layout, example_feed=example_feed, array_types=_ARRAY_TYPE,
        threads=memory_pages is not None, memory_pages=memory_pages or (0, 0),
        worker_stack_bytes=WORKER_STACK_BYTES, max_threads=MAX_THREADS,
    )


def package_name(name: str) -> str:
    """The npm name of a model: lower case, words joined by '-' (npm refuses capitals and a leading '_')."""
    return "-".join(part for part in name.lower().split("_") if part) or "model"


def write_package(out_dir: Path, name: str, graph, variables=(), threads: bool = False) -> list[str]:
    """package.json and NAME.d.ts beside NAME.mjs: the folder is an npm package with TypeScript types
    (threads: a threads build's, with load's options and the pool). Returns the file names."""
    from .report import tensor_info

    inputs = [tensor_info(v) for v in graph.inputs]
    outputs = [tensor_info(v, n) for v, n in zip(graph.outputs, graph.output_names)]
    (out_dir / "package.json").write_text(json.dumps(package_json(name), indent=2) + "\n")
    (out_dir / f"{name}.d.ts").write_text(render("model.d.ts.j2", name=name, version=__version__,
                                                 name_literal=json.dumps(name), array_types=_ARRAY_TYPE,
                                                 inputs=[_ts_tensor(t) for t in inputs],
                                                 outputs=[_ts_tensor(t) for t in outputs],
                                                 dims=[dict(name=v.name, low=v.low, high=v.high) for v in variables],
                                                 threads=threads, max_threads=MAX_THREADS))
    return ["package.json", f"{name}.d.ts"]


def package_json(name: str) -> dict:
    module, types, wasm = f"./{name}.mjs", f"./{name}.d.ts", f"{name}.wasm"
    return {
        "name": package_name(name),
        "version": "1.0.0",
        "description": f"The model {name} compiled to WebAssembly by mlcc {__version__}: load() then run()",
        "type": "module",
        "main": module,
        "types": types,
        "exports": {".": {"types": types, "default": module}, f"./{wasm}": f"./{wasm}"},
        "files": [f"{name}.mjs", f"{name}.d.ts", wasm],
        "sideEffects": False,
    }


def _ts_tensor(t: dict) -> dict:
    shape = ", ".join(str(d) for d in t["shape"])
    return dict(name=json.dumps(t["name"]), dtype=json.dumps(t["dtype"]), array=_ARRAY_TYPE[t["dtype"]],
                shape=f"[{shape}]", size=prod(t["shape"]))
