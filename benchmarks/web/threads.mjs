// Times a wasm32-threads build's NAME.mjs under node on 1 and N threads, alternating: benchmarks/threads.py.
// usage: node threads.mjs NAME.mjs ROUNDS REPEAT THREADS...
// Loads the model once per thread count (all at once), feeds seeded pseudo-random inputs, runs each twice
// untimed (the first prepares Winograd's weights) and checks every count's outputs have the one-thread bits,
// then per round times REPEAT runs, each count in turn run by run. Prints one JSON line: per count, the rounds'
// medians and minima of wall time (ms), the threads it got, and the tasks its workers ran.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const [modulePath, rounds, repeat, ...counts] = process.argv.slice(2);
const { load, arrayTypes } = await import(pathToFileURL(modulePath).href);

let state = 12345;
function random() {  // xorshift32 in [-1, 1): values do not change the timing
  state ^= state << 13; state ^= state >>> 17; state ^= state << 5;
  return (state >>> 0) / 2147483648 - 1;
}

const models = [];
for (const threads of counts) models.push(await load(undefined, { threads: Number(threads) }));
const feeds = Object.fromEntries(models[0].inputs.map((t) => [t.name, arrayTypes[t.dtype].from({ length: t.size }, random)]));
let reference;
for (const model of models) {
  model.run(feeds);
  const outputs = model.run(feeds);
  const bytes = models[0].outputs.map((t) => new Uint8Array(outputs[t.name].buffer));
  reference ??= bytes;
  const same = bytes.every((b, i) => b.length === reference[i].length && b.every((v, j) => v === reference[i][j]));
  if (!same) throw new Error(`${model.threads} threads: outputs differ from one thread's`);
}
const medians = models.map(() => []), minima = models.map(() => []);
for (let round = 0; round < Number(rounds); round++) {
  const times = models.map(() => []);
  for (let i = 0; i < Number(repeat); i++) {  // run by run, each count in turn: a load swing hits both
    models.forEach((model, m) => {
      const start = performance.now();
      model.run(feeds);
      times[m].push(performance.now() - start);
    });
  }
  times.forEach((t, m) => {
    t.sort((a, b) => a - b);
    medians[m].push(t[Math.floor(t.length / 2)]);
    minima[m].push(t[0]);
  });
}
console.log(JSON.stringify(models.map((model, m) => ({
  asked: Number(counts[m]), threads: model.threads, workerTasks: model.workerTasks(), round_medians_ms: medians[m],
  round_minima_ms: minima[m],
}))));
models.forEach((model) => model.close());
