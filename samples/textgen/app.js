// The browser page: generate from the prompt a character at a time, showing each as it comes.
// Build the model beside this page first (see README.md).
import { load } from "./model/textgen.mjs";
import { generate } from "./generate.js";

const $ = (id) => document.getElementById(id);
const started = performance.now();
const model = await load();
$("load-time").textContent = `${(performance.now() - started).toFixed(1)} ms (fetch, compile, instantiate)`;
$("arena").textContent = `${(model.arenaBytes / 1024).toFixed(1)} KiB, planned for the longest cache`;

// the latest generation, for the tests (tests/models/test_textgen_sample.py) and the curious
const state = { prompt: null, tokens: [], done: false, msPerStep: null };
window.textgenSample = state;

const nextFrame = () => new Promise((resolve) => setTimeout(resolve, 0));

async function run(event) {
  event?.preventDefault();
  const prompt = $("prompt").value;
  const count = Number($("count").value);
  Object.assign(state, { prompt, tokens: [], done: false, msPerStep: null });
  $("go").disabled = true;
  const output = $("output");
  output.replaceChildren(Object.assign(document.createElement("span"), { className: "prompt", textContent: prompt }));
  const text = output.appendChild(document.createTextNode(""));
  let busy = 0;
  try {
    const steps = generate(model, prompt, count);
    for (;;) {
      const t0 = performance.now();
      const { value, done } = steps.next();
      busy += performance.now() - t0;
      if (done) break;
      state.tokens.push(value.token);
      text.appendData(value.text);
      await nextFrame();  // let the page paint each character
    }
    state.msPerStep = busy / (prompt.length + state.tokens.length);
    $("latency").textContent = `${state.msPerStep.toFixed(3)} ms (${prompt.length + state.tokens.length} steps)`;
  } catch (error) {
    text.appendData(`\n[${error.message}]`);
  } finally {
    state.done = true;
    $("go").disabled = false;
  }
}

$("form").addEventListener("submit", run);
document.body.dataset.ready = "1";
