// Runs a WASI command module (a benchmark harness built for wasm32) in node's V8, the engine onnxruntime-web
// runs in, with the process's CPU time lent as mlcc_bench.thread_cpu_ns (as benchmarks/gemm.py's run_wasi
// lends wasmtime the thread's).
// usage: node --no-liftoff wasi.mjs MODULE.wasm ARGS...
import { readFileSync } from "node:fs";
import { WASI } from "node:wasi";

const [module, ...args] = process.argv.slice(2);
const wasi = new WASI({ version: "preview1", args: [module, ...args], env: {}, returnOnExit: true });
const cpuNs = () => { const u = process.cpuUsage(); return BigInt(u.user + u.system) * 1000n; };
const { instance } = await WebAssembly.instantiate(readFileSync(module), {
  wasi_snapshot_preview1: wasi.wasiImport,
  mlcc_bench: { thread_cpu_ns: cpuNs },
});
process.exitCode = wasi.start(instance);
