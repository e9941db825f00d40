// The page side of mlcc's chromium runner: loads models' ES modules and runs them on tensors sent as
// base64 strings of their raw little-endian bytes, in ONNX order.
const KEEP = 4;  // models kept loaded (each holds its own wasm memory); the least recently used goes first
const loaded = new Map();  // module URL -> { model, arrayTypes }

async function open(url) {
  let entry = loaded.get(url);
  if (entry) {
    loaded.delete(url);
  } else {
    const { load, arrayTypes } = await import(url);
    entry = { model: await load(), arrayTypes };
  }
  loaded.set(url, entry);
  if (loaded.size > KEEP) loaded.delete(loaded.keys().next().value);
  return entry;
}

export async function run(url, encodedInputs) {
  const { model, arrayTypes } = await open(url);
  const feeds = Object.fromEntries(model.inputs.map((t, i) => [
    t.name, new arrayTypes[t.dtype](decode(encodedInputs[i]).buffer),
  ]));
  const results = model.run(feeds);
  return model.outputs.map((t) => encode(results[t.name]));
}

function decode(text) {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function encode(array) {
  const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}
