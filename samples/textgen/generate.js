// Text generation with the key/value cache, one character a step: the loop the Node script and the page share.
// The model (textgen.mjs, built by `mlcc build ... -t wasm32 --dim past=0..255`) takes one character's id and
// every layer's past keys and values, and returns the next character's logits and the presents, which become
// the next step's past. Nothing is recomputed: each step costs one position, whatever the length so far.

// newline, then printable ASCII: samples/textgen/train.py's VOCABULARY
export const VOCABULARY = "\n" + Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("");

export function encode(text) {
  return Array.from(text, (c) => {
    const id = VOCABULARY.indexOf(c);
    if (id < 0) throw new RangeError(`character ${JSON.stringify(c)} is not in the vocabulary`);
    return id;
  });
}

function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** The model's limits: the largest past it takes (its context is one more) and the cache inputs. */
export function cacheOf(model) {
  const pastNames = model.inputs.map((t) => t.name).filter((name) => name.startsWith("past_"));
  return { pastNames, maxPast: model.dims.past[1] };
}

/**
 * Greedy generation: feeds `prompt` a character at a time from an empty cache, then yields `count`
 * characters (fewer if the context fills), each the most likely next one. Each yielded item carries the
 * token id, the character and the step's logits (for the tests: they compare them with onnxruntime's).
 */
export function* generate(model, prompt, count) {
  const { pastNames, maxPast } = cacheOf(model);
  let past = Object.fromEntries(pastNames.map((name) => [name, new Float32Array(0)]));
  let length = 0;  // positions in the cache
  const step = (token) => {
    const out = model.run({ input_ids: BigInt64Array.of(BigInt(token)), ...past }, { past: length });
    past = Object.fromEntries(pastNames.map((name) => [name, out[name.replace("past_", "present_")]]));
    length += 1;
    return out.logits;
  };
  const ids = encode(prompt);
  if (ids.length === 0 || ids.length > maxPast + 1) throw new RangeError(`the prompt needs 1..${maxPast + 1} characters`);
  let logits;
  for (const id of ids) logits = step(id);
  for (let i = 0; i < count; i++) {
    const token = argmax(logits);
    yield { token, text: VOCABULARY[token], logits };
    if (length > maxPast) return;  // the context is full
    logits = step(token);
  }
}
