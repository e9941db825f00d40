// Times mlcc's ES module (an `mlcc build -t wasm32` folder's NAME.mjs) under node, in V8 as onnxruntime-web
// runs (bench.mjs), so the two can be compared in one engine.
// usage: node --no-liftoff mlcc.mjs BUILD_DIR NAME WARMUP REPEAT
// Prints one JSON line: {"times_ms": [...], "cpu_ms": [...]}: each run's wall time and the process's CPU time
// over it, as bench.mjs does for onnxruntime-web.
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";

const [dir, name, warmup, repeat] = process.argv.slice(2);
const mod = await import(`${resolve(dir)}/${name}.mjs`);
const model = await mod.load();
let state = 12345;
function random() {  // xorshift32 in [-1, 1), as bench.mjs: values do not change the timing
  state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
  return (state >>> 0) / 2147483648 - 1;
}
const feeds = {};
for (const t of model.inputs) {
  const a = new mod.arrayTypes[t.dtype](t.size);
  for (let i = 0; i < t.size; i++) {
    a[i] = t.dtype === "int64" ? BigInt(Math.floor((random() + 1) * 2))
      : t.dtype.startsWith("float") ? random() : Math.floor((random() + 1) * 2);
  }
  feeds[t.name] = a;
}
for (let i = 0; i < Number(warmup); i++) model.run(feeds);
const times = [], cpu = [];
for (let i = 0; i < Number(repeat); i++) {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  model.run(feeds);
  times.push(performance.now() - start);
  const used = process.cpuUsage(cpuStart);
  cpu.push((used.user + used.system) / 1000);
}
console.log(JSON.stringify({ times_ms: times, cpu_ms: cpu }));
