// "Translate in this browser": a served model's web export (GET /models gives its `web`: url
// and download size; `anuvad serve --web DIR`) loaded into this page with the export's own
// runtime (/web/<model>/anuvad.js: a Web Worker running onnxruntime-web), so that the text box
// is translated here instead of by POST /translate. The files are downloaded once, after the
// reader agrees to their size, and kept in Cache Storage. Any failure (no WebAssembly SIMD,
// a load error) is said and the server translates again; a full disk only means the files are
// downloaded again next time.

import { authHeaders } from "./api.js";
import { $ } from "./dom.js";
import { showError } from "./output.js";
import { currentModel, state } from "./state.js";

const loaded = new Map(); // model id -> Promise of its translator

// The Cache Storage name of a model's export: a new export (another size) is downloaded anew.
// A re-export (another dtype, model or setting) changes the version: never the old files.
const cacheName = (model) => `anuvad-web:${model.id}:${model.web.version}`;

const megabytes = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

// Whether the text box is translated in this browser.
export function inBrowser() {
  const model = currentModel();
  return Boolean(model && model.web && $("browser-switch").checked);
}

// The switch for the chosen model: shown only where it has a web export; while it is on, the
// features the browser runtime lacks say so and are set aside.
export function syncBrowserSwitch() {
  const model = currentModel();
  const offered = Boolean(model && model.web);
  $("browser-field").hidden = !offered;
  if (!offered) $("browser-switch").checked = false;
  $("browser-size").textContent = offered ? `(${megabytes(model.web.download_bytes)} download, once)` : "";
  const on = inBrowser();
  for (const id of ["glossary", "keep", "digits", "file-input"]) $(id).disabled = on;
  $("glossary-field").classList.toggle("disabled", on);
  $("file-input").closest("label")?.classList.toggle("disabled", on); // looks as it acts
  $("browser-note").hidden = !on;
  if (!on) $("browser-status").textContent = ""; // "Ready: translating in this browser." no more
}

async function alreadyCached(model) {
  try {
    return typeof caches !== "undefined" && (await caches.has(cacheName(model)));
  } catch {
    return false;
  }
}

// The chosen model's translator in this browser, loading it on first use.
function translator(model) {
  if (!loaded.has(model.id)) {
    const load = (async () => {
      const runtime = await import(`${model.web.url}anuvad.js`);
      // The model files need the API key where the server has keys (the code does not).
      return runtime.load(model.web.url, { cache: cacheName(model), headers: authHeaders() });
    })();
    loaded.set(model.id, load);
    load.catch(() => loaded.delete(model.id)); // a failed load is tried again next time
  }
  return loaded.get(model.id);
}

// The switch turned on (asks before the first download) or off. Returns whether it is on.
export async function switchToBrowser(on) {
  const model = currentModel();
  if (!on || !model || !model.web) {
    $("browser-switch").checked = false;
    syncBrowserSwitch();
    return false;
  }
  if (!loaded.has(model.id) && !(await alreadyCached(model))) {
    const size = megabytes(model.web.download_bytes);
    const ok = window.confirm(`Translating in this browser downloads the model once (${size}); it is kept for next time. Download it now?`);
    if (!ok) {
      $("browser-switch").checked = false;
      syncBrowserSwitch();
      return false;
    }
  }
  $("browser-switch").checked = true;
  syncBrowserSwitch();
  $("browser-status").textContent = "Loading the model into this browser…";
  try {
    const t = await translator(model);
    if (!$("browser-switch").checked) return false; // turned off while it loaded
    $("browser-status").textContent = t.warnings && t.warnings.length ? t.warnings[0] : "Ready: translating in this browser.";
    return true;
  } catch (err) {
    fallBack(err);
    return false;
  }
}

// A failure in the browser: said, and the server translates again.
function fallBack(err) {
  $("browser-switch").checked = false;
  syncBrowserSwitch();
  $("browser-status").textContent = "";
  showError(`Translating in this browser failed: ${err.message}. The server translates instead.`);
}

// The text box translated in this browser, answered in the shape of POST /translate's answer
// (one text) so that the page shows it as a server translation. Stopping (`signal`) throws an
// error whose `stopped` is true, as api.js does; a failure turns the switch off and throws an
// error whose `fallBack` is true (the caller then asks the server).
export async function translateInBrowser(text, request, signal) {
  const model = currentModel();
  const started = performance.now();
  let t;
  let found;
  try {
    t = await translator(model);
    found = await t.translateText(text, { beam_size: request.beam_size, nbest: request.nbest, signal });
  } catch (err) {
    if (err.name === "AbortError" || signal.aborted) throw Object.assign(new Error("stopped"), { stopped: true });
    fallBack(err);
    throw Object.assign(new Error(err.message), { fallBack: true });
  }
  // The server's offsets count code points; the runtime's, UTF-16 units.
  const points = (units) => [...text.slice(0, units)].length;
  const sentences = found.sentences.map((s) => ({
    ...s, start: points(s.start), end: points(s.end), confidence: null, words: [],
    // The candidates as the server's n-best (the best one mended as the shown text; the
    // runtime gives scores, not log-probabilities).
    nbest: s.candidates.map((c, i) => ({ text: i === 0 ? s.text : c.text, score: c.score, log_prob: null })),
  }));
  return {
    model: model.id,
    decoding: request.decoding,
    beam_size: request.beam_size,
    elapsed_ms: performance.now() - started,
    in_browser: true,
    translations: [{ text: found.text, sentences }],
  };
}
