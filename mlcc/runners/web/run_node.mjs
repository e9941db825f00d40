// mlcc's node runner: `node run_node.mjs NAME.mjs FOLDER` loads the model's ES module, reads input<i>.bin
// from FOLDER (raw little-endian tensors in ONNX order), runs once and writes output<i>.bin beside them. A model
// with run-time dimensions takes their sizes from FOLDER/dims.json and writes the outputs' shapes to shapes.json.
// A threads build (wasm32-threads) runs on THREADS threads: `node run_node.mjs NAME.mjs FOLDER THREADS`.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [modulePath, folder, threads] = process.argv.slice(2);
const { load, arrayTypes } = await import(pathToFileURL(modulePath).href);
const model = threads === undefined ? await load() : await load(undefined, { threads: Number(threads) });

const feeds = Object.fromEntries(await Promise.all(model.inputs.map(async (t, i) => {
  const bytes = await readFile(join(folder, `input${i}.bin`));
  // copy into a fresh buffer: a typed array view needs its element alignment
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return [t.name, new arrayTypes[t.dtype](buffer)];
})));
const sizes = model.dims ? JSON.parse(await readFile(join(folder, "dims.json"), "utf8")) : undefined;
const results = model.dims ? model.run(feeds, sizes) : model.run(feeds);
if (model.dims) {
  const shapes = model.shapes(sizes);
  await writeFile(join(folder, "shapes.json"), JSON.stringify(model.outputs.map((t) => shapes[t.name])));
}
await Promise.all(model.outputs.map((t, i) => {
  const array = results[t.name];
  return writeFile(join(folder, `output${i}.bin`), new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
}));
