// Drives a wasm32-threads build's NAME.mjs for tests/robustness/test_parallel.py: `node wasm_threads.mjs
// NAME.mjs FOLDER THREADS...` reads input<i>.bin from FOLDER, runs the model loaded with each thread count
// (twice: workers take tasks in a different order each time; unrecorded runs follow until a worker has taken
// a task), then once more with SharedArrayBuffer taken away (the fallback: one thread), writing
// output<i>-<label>-<run>.bin and, on stdout, what each load got.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modulePath, folder, ...counts] = process.argv.slice(2);
const { load, arrayTypes } = await import(pathToFileURL(modulePath).href);

async function runAll(label, options) {
  const model = await load(undefined, options);
  const feeds = Object.fromEntries(await Promise.all(model.inputs.map(async (t, i) => {
    const bytes = await readFile(join(folder, `input${i}.bin`));
    return [t.name, new arrayTypes[t.dtype](bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))];
  })));
  for (let run = 0; run < 2; run++) {
    const results = model.run(feeds);
    await Promise.all(model.outputs.map((t, i) => {
      const a = results[t.name];
      return writeFile(join(folder, `output${i}-${label}-${run}.bin`), new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    }));
  }
  // a loaded machine may not schedule a worker before the caller has claimed every task: give the pool
  // more runs (and the workers time to start) before reporting that none ran on a worker
  for (let retry = 0; retry < 50 && model.threads > 1 && model.workerTasks() === 0; retry++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    model.run(feeds);
  }
  const got = { label, threads: model.threads, workerTasks: model.workerTasks() };
  model.close();
  return got;
}

const report = [];
for (const threads of counts) report.push(await runAll(`t${threads}`, { threads: Number(threads) }));
delete globalThis.SharedArrayBuffer;  // as in a page that is not cross-origin isolated
report.push(await runAll("fallback", { threads: 4 }));
console.log(JSON.stringify(report));
