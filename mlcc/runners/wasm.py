"""wasm32 runner: instantiates NAME.wasm in wasmtime. The module imports nothing; inputs, outputs and the
arena are placed in its linear memory above __heap_base, which the generated code never touches.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import RunError
from . import LoadedModel, register

PAGE = 65536


def _align(n: int, a: int = 64) -> int:
    return (n + a - 1) // a * a


@register("wasmtime", runs="wasm")
class WasmModel(LoadedModel):
    def __init__(self, out_dir: Path, report: dict):
        import wasmtime

        super().__init__(out_dir, report)
        path = out_dir / report["artifacts"].get("wasm", "")
        if not path.is_file():
            raise RunError(f"{out_dir} has no .wasm module to run")
        config = wasmtime.Config()
        config.wasm_simd = True
        self.engine = wasmtime.Engine(config)
        self.store = wasmtime.Store(self.engine)
        module = wasmtime.Module.from_file(self.engine, str(path))
        if module.imports:  # a threads build imports the shared memory its ES module makes for the workers
            raise RunError(f"{path.name} imports {', '.join(f'{i.module}.{i.name}' for i in module.imports)} "
                           f"(a {report.get('target')} build): run it with --runner node or chromium")
        instance = wasmtime.Instance(self.store, module, [])
        exports = instance.exports(self.store)
        if "_initialize" in exports:
            exports["_initialize"](self.store)
        self.memory = exports["memory"]
        self.entry = exports[f"{report['name']}_run_v"]
        self.entry_dims = exports[f"{report['name']}_run_dims"] if report.get("dims") else None
        self.base = _align(exports["__heap_base"].value(self.store))

    def _invoke(self, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> int:
        return self._call(inputs, outputs, None)[0]

    def _invoke_dims(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int]) -> tuple[int, list[int]]:
        return self._call(inputs, outputs, sizes)

    def _call(self, inputs: list[np.ndarray], outputs: list[np.ndarray], sizes: list[int] | None) -> tuple[int, list[int]]:
        """Lays the tables, tensors and arena out above __heap_base and calls NAME_run_v, or NAME_run_dims
        with `sizes` (NAME_dims: size_t members, 4 bytes each on wasm32)."""
        store, memory = self.store, self.memory
        cursor = self.base
        in_table, cursor = cursor, _align(cursor + 4 * max(len(inputs), 1))
        out_table, cursor = cursor, _align(cursor + 4 * len(outputs))
        ranks = sum(len(o["shape"]) for o in self.outputs)
        dims_at, cursor = cursor, _align(cursor + 4 * max(len(sizes or []), 1))
        shapes_at, cursor = cursor, _align(cursor + 4 * max(ranks, 1))
        in_addrs, out_addrs = [], []
        for a in inputs:
            in_addrs.append(cursor)
            cursor = _align(cursor + a.nbytes)
        for a in outputs:
            out_addrs.append(cursor)
            cursor = _align(cursor + a.nbytes)
        arena, cursor = cursor, cursor + max(self.report["arena_bytes"], 1)
        if cursor > 1 << 32:
            raise RunError(f"model needs {cursor} bytes of wasm32 memory, over the 4 GiB limit")
        have = memory.data_len(store)
        if cursor > have:
            memory.grow(store, (cursor - have + PAGE - 1) // PAGE)
        memory.write(store, np.array(in_addrs or [0], dtype="<u4").tobytes(), in_table)
        memory.write(store, np.array(out_addrs, dtype="<u4").tobytes(), out_table)
        for a, addr in zip(inputs, in_addrs):
            memory.write(store, a.tobytes(), addr)
        self.layout = (in_table, out_table, dims_at, shapes_at, arena)  # the addresses of this call (benchmarks)
        if sizes is None:
            status, shapes = self.entry(store, in_table, out_table, arena), []
        else:  # outputs are written packed at their run-time shapes: what lies beyond is the caller's as given
            for a, addr in zip(outputs, out_addrs):
                memory.write(store, a.tobytes(), addr)
            memory.write(store, np.array(sizes, dtype="<u4").tobytes(), dims_at)
            status = self.entry_dims(store, dims_at, in_table, out_table, shapes_at, arena)
            shapes = np.frombuffer(memory.read(store, shapes_at, shapes_at + 4 * ranks), dtype="<u4").tolist()
        for a, addr in zip(outputs, out_addrs):
            a[...] = np.frombuffer(memory.read(store, addr, addr + a.nbytes), dtype=a.dtype).reshape(a.shape)
        return status, shapes
