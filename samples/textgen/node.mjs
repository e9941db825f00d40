// Generate text in Node from the wasm build of textgen.onnx (see README.md):
//   node samples/textgen/node.mjs "Four score" 200 [MODEL_DIR] [--json]
// MODEL_DIR holds textgen.mjs and textgen.wasm (default: model/ beside this script). --json prints the token
// ids and the time per step instead of the text.
import { pathToFileURL } from "node:url";
import { generate } from "./generate.js";

const args = process.argv.slice(2).filter((a) => a !== "--json");
const json = process.argv.includes("--json");
const [prompt = "Four score", count = "200", dir = new URL("model/", import.meta.url).pathname] = args;
const { load } = await import(pathToFileURL(`${dir}/textgen.mjs`).href);
const model = await load();

const tokens = [];
const started = performance.now();
if (!json) process.stdout.write(prompt);
for (const { token, text } of generate(model, prompt, Number(count))) {
  tokens.push(token);
  if (!json) process.stdout.write(text);
}
const msPerStep = (performance.now() - started) / (prompt.length + tokens.length);
if (json) console.log(JSON.stringify({ tokens, msPerStep }));
else console.log(`\n\n[${tokens.length} characters, ${msPerStep.toFixed(3)} ms per step]`);
