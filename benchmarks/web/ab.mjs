// mlcc's ES module and onnxruntime-web in one node process, alternating rounds (same engine: V8).
// usage: node ab.mjs BUILD_DIR NAME MODEL.onnx ROUNDS RUNS
import { readFileSync } from "node:fs";
import * as ort from "onnxruntime-web";
const [dir, name, modelPath, rounds, runs] = process.argv.slice(2);
ort.env.wasm.numThreads = 1; ort.env.wasm.simd = true; ort.env.logLevel = "error";
const mod = await import(`${dir}/${name}.mjs`);
const model = await mod.load();
const session = await ort.InferenceSession.create(readFileSync(modelPath), {
  executionProviders: ["wasm"], graphOptimizationLevel: "all", executionMode: "sequential",
  intraOpNumThreads: 1, interOpNumThreads: 1 });
const feeds = {}, ortFeeds = {};
for (const t of model.inputs) {
  const a = new mod.arrayTypes[t.dtype](t.size);
  for (let i = 0; i < t.size; i++) a[i] = t.dtype === "int64" ? 1n : Math.sin(i);
  feeds[t.name] = a; ortFeeds[t.name] = new ort.Tensor(t.dtype, a, t.shape);
}
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (let i = 0; i < 2; i++) { model.run(feeds); await session.run(ortFeeds); }
const m = [], o = [];
for (let r = 0; r < Number(rounds); r++) {
  let c = cpu(); for (let i = 0; i < Number(runs); i++) model.run(feeds); m.push((cpu() - c) / runs);
  c = cpu(); for (let i = 0; i < Number(runs); i++) await session.run(ortFeeds); o.push((cpu() - c) / runs);
}
console.log(JSON.stringify({ mlcc_cpu_ms: med(m), ort_web_cpu_ms: med(o), ratio: med(m) / med(o) }));
