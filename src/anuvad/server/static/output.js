// The translation pane: what it shows (a whole translation, or what arrived of a streaming
// one), its progress line, its out-of-date mark, and the error box under the controls.

import { $, fillSelect, truncate } from "./dom.js";
import { clearAttention } from "./heatmap.js";
import { renderDocument, renderMarkup, renderPlaceholder, renderSentenceList } from "./render.js";
import { modelById, state } from "./state.js";

export function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

export function setStatus(message) {
  $("status").textContent = message;
}

export function markStale(stale) {
  $("output-card").classList.toggle("stale", stale);
  $("stale-note").hidden = !stale;
}

// Forget the shown translation: the pane shows its placeholder again.
export function clearOutput() {
  state.result = null;
  state.sources = [];
  state.request = null;
  renderPlaceholder();
  clearAttention();
  $("attention-status").hidden = true;
  $("sentence-field").hidden = true;
  setStatus("");
  $("timing").textContent = "";
  markStale(false);
  $("copy-button").disabled = true;
  $("download-button").disabled = true;
}

// Show a translation (whole or what arrived of it) in the pane; ``sentences`` index → SentenceOut.
export function showTranslation({ model, source, sentences, total, text, format }) {
  const shown = format === "html"
    ? renderMarkup(sentences, total, text)
    : renderDocument(source, sentences, total);
  renderSentenceList(sentences, modelById(model) ? modelById(model).tgt_lang : $("document").lang);
  state.result = { model, text: text ?? shown, format, file: state.file, complete: text !== undefined };
  state.sources = sentences.map((s) => (s ? s.source : ""));
  state.attentionOf = null;
  clearAttention();
  markStale(false);
  $("copy-button").disabled = !state.result.text;
  $("download-button").disabled = !state.result.text;
  const arrived = sentences.map((s, i) => (s ? i : -1)).filter((i) => i >= 0);
  fillSelect($("sentence"), arrived, arrived[0], (i) => `${i + 1}. ${truncate(state.sources[i], 40)}`);
  $("sentence-field").hidden = arrived.length < 2;
}
