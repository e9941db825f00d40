// mlcc's ES modules and onnxruntime-web in one node process, alternating rounds (the same engine: V8).
// usage: node --no-liftoff ab.mjs MODEL.onnx ROUNDS RUNS NAME BUILD_DIR [BUILD_DIR...]
//   each BUILD_DIR an `mlcc build -t wasm32` folder of MODEL (its NAME.mjs), e.g. two versions of mlcc
// Prints one JSON line: per build, the median over rounds of its CPU ms per run (the process's CPU time over
// RUNS runs) and its ratio to onnxruntime-web's, timed the same way in the same rounds.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import * as ort from "onnxruntime-web";

const [modelPath, rounds, runs, name, ...dirs] = process.argv.slice(2);
ort.env.wasm.numThreads = 1; ort.env.wasm.simd = true; ort.env.logLevel = "error";
const builds = [];
for (const dir of dirs) {
  const mod = await import(`${resolve(dir)}/${name}.mjs`);
  builds.push({ dir, mod, model: await mod.load() });
}
const session = await ort.InferenceSession.create(readFileSync(modelPath), {
  executionProviders: ["wasm"], graphOptimizationLevel: "all", executionMode: "sequential",
  intraOpNumThreads: 1, interOpNumThreads: 1 });
const { mod, model } = builds[0];
const feeds = {}, ortFeeds = {};
for (const t of model.inputs) {
  const a = new mod.arrayTypes[t.dtype](t.size);
  for (let i = 0; i < t.size; i++) a[i] = t.dtype === "int64" ? 1n : Math.sin(i);
  feeds[t.name] = a; ortFeeds[t.name] = new ort.Tensor(t.dtype, a, t.shape);
}
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
for (let i = 0; i < 2; i++) { for (const b of builds) b.model.run(feeds); await session.run(ortFeeds); }
const times = builds.map(() => []), web = [];
for (let r = 0; r < Number(rounds); r++) {
  for (const [i, b] of builds.entries()) {
    const c = cpu(); for (let k = 0; k < Number(runs); k++) b.model.run(feeds); times[i].push((cpu() - c) / runs);
  }
  const c = cpu(); for (let k = 0; k < Number(runs); k++) await session.run(ortFeeds); web.push((cpu() - c) / runs);
}
const out = { ort_web_cpu_ms: med(web), builds: builds.map((b, i) => ({
  dir: b.dir, mlcc_cpu_ms: med(times[i]), ratio: med(times[i]) / med(web) })) };
console.log(JSON.stringify(out));
