// A translation, from the text box to the pane: the request made from the controls and the
// Terms, sent to POST /translate/stream so that a long text fills in sentence by sentence (or,
// with "Translate in this browser" on, to the model's web export: browser.js), and Stop (or a
// newer keystroke) cancelling it.

import { api, translateStreamed } from "./api.js";
import { inBrowser, translateInBrowser } from "./browser.js";
import { $, charCount, plural } from "./dom.js";
import { checkScript, hideScriptWarning } from "./direction.js";
import { showAttention } from "./heatmap.js";
import { markStale, setStatus, showError, showTranslation } from "./output.js";
import { state } from "./state.js";

export function decoding() {
  return document.querySelector("input[name=decoding]:checked").value;
}

function setBusy(busy) {
  state.busy = busy;
  const button = $("translate-button");
  button.disabled = busy;
  button.classList.toggle("busy", busy);
  button.querySelector(".button-label").textContent = busy ? "Translating…" : "Translate";
  $("stop-button").hidden = !busy;
}

// Stop the translation in flight: what arrived stays, "Stopped" says so; the focus, on the
// Stop button that now hides, goes back to the text.
export function stopTranslation() {
  if (!state.controller) return;
  state.controller.abort("stopped");
  $("source").focus();
}

// The terms box: "term = translation" per line (blank lines ignored) → the API's glossary;
// ``lines[i]`` is the box's line number of term i (to name it in the server's errors).
function glossaryTerms() {
  const terms = [];
  const numbers = [];
  const lines = $("glossary").value.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const at = line.indexOf("=");
    const source = at < 0 ? "" : line.slice(0, at).trim();
    const target = at < 0 ? "" : line.slice(at + 1).trim();
    if (!source || !target) throw new Error(`Terms, line ${i + 1}: write it as "term = translation"`);
    terms.push({ source, target });
    numbers.push(i + 1);
  }
  return { terms, lines: numbers };
}

// The names box: one name per line (blank lines ignored); ``lines`` as for the terms.
function keptNames() {
  const names = [];
  const numbers = [];
  $("keep").value.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    names.push(line.trim());
    numbers.push(i + 1);
  });
  return { names, lines: numbers };
}

// The fields that decide the translation's words besides the search: Terms, names kept, the
// digits of numbers (sent to /translate and, for the same translation, to /attention).
function wordingFields() {
  const fields = {};
  const terms = $("terms-label").hidden ? { terms: [], lines: [] } : glossaryTerms();
  const keep = $("keep-label").hidden ? { names: [], lines: [] } : keptNames();
  if (terms.terms.length) fields.glossary = terms.terms;
  if (keep.names.length) fields.keep = keep.names;
  if (!$("digits-label").hidden) fields.digits = $("digits").value;
  return { fields, termLines: terms.lines, nameLines: keep.lines };
}

// "glossary.2.target: ..." (the server's 0-based index) → "Terms, line 4: ..."; "keep.1: ..."
// → "Names, line 2: ...".
function nameLines(message, wording) {
  const line = (lines, i) => lines[Number(i)] ?? Number(i) + 1;
  return message
    .replace(/glossary\.(\d+)(\.\w+)?/g, (_, i) => `Terms, line ${line(wording.termLines, i)}`)
    .replace(/keep\.(\d+)/g, (_, i) => `Names, line ${line(wording.nameLines, i)}`);
}

function requestBody(text, request) {
  const body = {
    text,
    split_sentences: true,
    decoding: request.decoding,
    beam_size: request.beam_size,
    nbest: request.nbest,
    model: request.model,
  };
  Object.assign(body, request.fields);
  if (request.names) body.names = request.names;
  // HTML keeps its markup: only the text between the tags is translated.
  if (request.format === "html") body.format = "html";
  return body;
}

// Translate the text box. ``auto`` (translate-as-you-type): a translation still in flight is
// cancelled for this newer text, and an empty box is no error.
export async function translate({ auto = false } = {}) {
  if (state.busy) {
    if (!auto) return;
    state.controller.abort("superseded");
  }
  clearTimeout(state.autoTimer);
  showError("");
  const text = $("source").value;
  if (!text.trim()) {
    if (!auto) showError("Type a sentence to translate.");
    return;
  }
  if (charCount(text) > state.limits.max_text_chars) {
    showError(`The text has ${charCount(text)} characters; this server takes up to ${state.limits.max_text_chars} per request. Translate it in parts.`);
    return;
  }
  let wording = { fields: {}, termLines: [], nameLines: [] }; // the browser runtime has no Terms
  try {
    if (!inBrowser()) wording = wordingFields();
  } catch (err) {
    showError(err.message);
    return;
  }
  const greedy = decoding() === "greedy";
  const request = {
    decoding: decoding(),
    beam_size: greedy ? 1 : Number($("beam-size").value),
    nbest: greedy ? 1 : Number($("nbest").value),
    model: state.modelId,
    fields: wording.fields,
    format: state.file ? state.file.format : "text",
    // Not one of `fields`: /attention re-translates without the names' second pass.
    names: !inBrowser() && !$("names-label").hidden && $("names-model").checked ? "model" : undefined,
  };
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  setStatus("Translating…");
  hideScriptWarning();
  const started = performance.now();
  // A long text streams: each sentence is shown as the server finishes it.
  const arrived = { sentences: [], done: 0, total: 0 };
  const onEvent = (event) => {
    if (controller.signal.aborted) return;
    arrived.total = event.total;
    if (event.event === "start") {
      setStatus(`0 of ${plural(event.total, "sentence")}`);
      return;
    }
    arrived.sentences[event.sentence] = event.result;
    arrived.done = event.done;
    state.request = request;
    showTranslation({ model: request.model, source: text, sentences: arrived.sentences, total: event.total, format: request.format });
    setStatus(`${event.done} of ${plural(event.total, "sentence")}`);
  };
  // Names translate some sentences twice, which the stream cannot send as they finish.
  const viaServer = () =>
    request.names
      ? api("/translate", requestBody(text, request), controller.signal)
      : translateStreamed(requestBody(text, request), controller.signal, onEvent);
  const here = inBrowser() && request.format === "text"; // a document (HTML) goes to the server
  try {
    let result;
    if (here) {
      try {
        result = await translateInBrowser(text, request, controller.signal);
      } catch (err) {
        if (!err.fallBack) throw err;
        result = await viaServer(); // the failure is said; the server translates instead
      }
    } else {
      result = await viaServer();
    }
    const roundTrip = performance.now() - started;
    showResult(result, text, { ...request, model: result.model }, roundTrip);
  } catch (err) {
    if (controller.signal.reason === "superseded") return; // a newer text is on its way
    if (err.stopped) {
      showStopped(arrived);
      if (arrived.done > 0 && $("detail").open) showAttention(Number($("sentence").value));
      return;
    }
    $("timing").textContent = ""; // of the run before
    if (arrived.done > 0) {
      // what arrived is this text's, not an earlier one's (it was marked out of date)
      setStatus(`Broke off: ${arrived.done} of ${plural(arrived.total, "sentence")} translated.`);
    } else {
      setStatus("");
      if (state.result) markStale(true);
    }
    // Text in the other language is refused (422) when the page names the model: say so with
    // the switch rather than the API's message.
    if (err.status === 422 && request.format === "text" && (await checkScript())) return;
    showError(nameLines(err.message, wording));
    return;
  } finally {
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
      // The text was edited while this ran: what is shown is of the text before.
      if (state.editedDuringRun && state.result) markStale(true);
      state.editedDuringRun = false;
    }
  }
  if (state.result && state.result.inBrowser) return; // the attention view is the server's
  // The attention view is extra and folded: asked for only when the detail is open.
  if ($("detail").open) await showAttention(0);
}

function showResult(result, text, request, roundTrip) {
  const doc = result.translations[0];
  state.request = request;
  showTranslation({
    model: result.model, source: text, sentences: doc.sentences, total: doc.sentences.length,
    text: doc.text, format: request.format,
  });
  const count = doc.sentences.length;
  const kept = (doc.kept || []).length;
  const keptNote = kept ? ` ${plural(kept, "part")} in another language kept as written.` : "";
  setStatus(`Translated ${plural(count, "sentence")}.${keptNote}`);
  const search = result.decoding === "greedy" ? "greedy search" : `beam search, beam ${result.beam_size}`;
  if (result.in_browser) {
    state.result.inBrowser = true;
    $("attention-status").textContent = "Translated in this browser: the attention heatmap and confidence come from the server.";
    $("attention-status").hidden = false;
    $("timing").textContent = `${plural(count, "sentence")} · ${result.elapsed_ms.toFixed(0)} ms in this browser · ${search}`;
    return;
  }
  $("timing").textContent = `${plural(count, "sentence")} · ${result.elapsed_ms.toFixed(0)} ms on the server · ${roundTrip.toFixed(0)} ms in all · ${search}`;
}

// Stopped: what arrived stays (and can be copied); an earlier translation, if nothing arrived,
// stays marked out of date. Said on the page, not only to screen readers. The timing line was
// of the previous run (issue 40 item 7): it goes.
function showStopped(arrived) {
  $("timing").textContent = "";
  if (arrived.done > 0) {
    setStatus(`Stopped: ${arrived.done} of ${plural(arrived.total, "sentence")} translated.`);
  } else {
    setStatus("Stopped: nothing was translated.");
    if (state.result) markStale(true);
  }
}
