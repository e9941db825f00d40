// Times one model in onnxruntime-web (wasm backend, one thread, SIMD) under node.
// usage: node bench.mjs MODEL.onnx INPUTS.json WARMUP REPEAT
//   INPUTS.json: [{"name", "dtype", "shape"}]; inputs are seeded pseudo-random values.
// Prints one JSON line: {"version", "times_ms": [...], "cpu_ms": [...]}: each session.run's wall time and the
// process's CPU time over it (one thread runs the model; V8's helper threads count too, so never less).
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import * as ort from "onnxruntime-web";

const [modelPath, inputsPath, warmup, repeat] = process.argv.slice(2);
ort.env.wasm.numThreads = 1;
ort.env.wasm.simd = true;
ort.env.logLevel = "error";

let state = 12345;
function random() {  // xorshift32 in [-1, 1): values do not change the timing
  state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
  return (state >>> 0) / 2147483648 - 1;
}

const arrays = {
  float32: (n) => Float32Array.from({ length: n }, random),
  int64: (n) => BigInt64Array.from({ length: n }, () => BigInt(Math.floor((random() + 1) * 2))),
  int32: (n) => Int32Array.from({ length: n }, () => Math.floor((random() + 1) * 2)),
};

const session = await ort.InferenceSession.create(readFileSync(modelPath), {
  executionProviders: ["wasm"],
  graphOptimizationLevel: "all",
  executionMode: "sequential",
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
});
const feeds = {};
for (const spec of JSON.parse(readFileSync(inputsPath, "utf8"))) {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  feeds[spec.name] = new ort.Tensor(spec.dtype, arrays[spec.dtype](n), spec.shape);
}
for (let i = 0; i < Number(warmup); i++) await session.run(feeds);
const times = [], cpu = [];
for (let i = 0; i < Number(repeat); i++) {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  await session.run(feeds);
  times.push(performance.now() - start);
  const used = process.cpuUsage(cpuStart);
  cpu.push((used.user + used.system) / 1000);
}
console.log(JSON.stringify({ version: ort.env.versions.web, times_ms: times, cpu_ms: cpu }));
