// The browser sample: draw on a 280x280 pad, shrink it to the model's 28x28 input, run, show the result.
// Build the model beside this page first (see README.md).
import { load } from "./model/digits_cnn.mjs";

const TIMED_RUNS = 20;  // one run takes well under a millisecond: time a few for a steady figure

const pad = document.getElementById("pad");
const pen = pad.getContext("2d");
const small = new OffscreenCanvas(28, 28).getContext("2d", { willReadFrequently: true });
const $ = (id) => document.getElementById(id);

const started = performance.now();
const model = await load();
$("load-time").textContent = `${(performance.now() - started).toFixed(1)} ms (fetch, compile, instantiate)`;
const [input] = model.inputs;
const [output] = model.outputs;
$("input-spec").textContent = `${input.name}: ${input.dtype} [${input.shape.join(", ")}]`;
$("arena").textContent = `${(model.arenaBytes / 1024).toFixed(1)} KiB`;

const bars = Array.from({ length: output.size }, (_, k) => {
  const item = document.createElement("li");
  item.innerHTML = `<span>${k}</span><span class="bar"></span><span class="value"></span>`;
  $("bars").append(item);
  return item;
});

// the latest input and output, for the tests (tests/targets/test_web.py) and the curious
const state = { input: null, output: null, latencyMs: null };
window.digitsSample = state;

function predict() {
  small.drawImage(pad, 0, 0, 28, 28);  // the browser's smoothing does the downsampling
  const pixels = small.getImageData(0, 0, 28, 28).data;
  const image = new Float32Array(input.size).map((_, i) => pixels[4 * i] / 255);
  let result = model.run({ [input.name]: image });
  const t0 = performance.now();
  for (let i = 0; i < TIMED_RUNS; i++) result = model.run({ [input.name]: image });
  state.latencyMs = (performance.now() - t0) / TIMED_RUNS;
  state.input = image;
  state.output = result[output.name];
  show(state.output);
}

function show(probabilities) {
  const best = probabilities.indexOf(Math.max(...probabilities));
  $("prediction").textContent = String(best);
  bars.forEach((item, k) => {
    item.classList.toggle("best", k === best);
    item.querySelector(".bar").style.width = `${(100 * probabilities[k]).toFixed(1)}%`;
    item.querySelector(".value").textContent = probabilities[k].toFixed(3);
  });
  $("latency").textContent = `${state.latencyMs.toFixed(3)} ms per run (mean of ${TIMED_RUNS}, WebAssembly SIMD)`;
}

function clear() {
  pen.fillStyle = "#000";
  pen.fillRect(0, 0, pad.width, pad.height);
}

function drawExample(digit) {
  clear();
  pen.fillStyle = "#fff";
  pen.font = "bold 210px system-ui, sans-serif";
  pen.textAlign = "center";
  pen.textBaseline = "middle";
  pen.fillText(String(digit), pad.width / 2, pad.height / 2 + 10);
  predict();
}

for (let digit = 0; digit < 10; digit++) {
  const button = document.createElement("button");
  button.textContent = String(digit);
  button.dataset.digit = String(digit);
  button.addEventListener("click", () => drawExample(digit));
  $("examples").append(button);
}
$("clear").addEventListener("click", () => { clear(); predict(); });

let drawing = false;
let pending = false;
pad.addEventListener("pointerdown", (event) => {
  drawing = true;
  pad.setPointerCapture(event.pointerId);
  pen.beginPath();
  pen.moveTo(event.offsetX, event.offsetY);
});
pad.addEventListener("pointermove", (event) => {
  if (!drawing) return;
  pen.strokeStyle = "#fff";
  pen.lineWidth = 22;
  pen.lineCap = pen.lineJoin = "round";
  pen.lineTo(event.offsetX, event.offsetY);
  pen.stroke();
  if (!pending) {  // at most one prediction per frame while drawing
    pending = true;
    requestAnimationFrame(() => { pending = false; predict(); });
  }
});
pad.addEventListener("pointerup", () => { drawing = false; predict(); });

drawExample(3);
document.body.dataset.ready = "true";
