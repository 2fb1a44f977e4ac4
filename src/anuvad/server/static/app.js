// anuvad web page: talks to the JSON API of the same server (GET /models, POST
// /translate/stream, /detect, /attention). Plain browser JavaScript modules, no build step, no
// libraries, nothing fetched elsewhere:
//   app.js        the controls restored and remembered, the wiring of every button
//   state.js      the page's state and the served models
//   direction.js  the model chosen, its description, the other-language warning
//   translate.js  a translation request, streamed, stoppable
//   output.js     the translation pane; render.js draws a translation, heatmap.js the attention
//   files.js      the character count, documents in, Copy and Download out
//   browser.js    "Translate in this browser": a model's web export run in this page
//   api.js        the requests (API key, errors, NDJSON); settings.js what is remembered

import { api } from "./api.js";
import { switchToBrowser } from "./browser.js";
import { checkScript, selectModel } from "./direction.js";
import { $, fillSelect, range } from "./dom.js";
import { copyTranslation, downloadTranslation, openDocument, setDocument, updateCount } from "./files.js";
import { drawHeatmap, showAttention } from "./heatmap.js";
import { markStale, showError } from "./output.js";
import { keepSentenceFocus, moveSentenceFocus } from "./render.js";
import { remember, remembered } from "./settings.js";
import { currentModel, modelById, modelTitle, reverseOf, state } from "./state.js";
import { decoding, stopTranslation, translate } from "./translate.js";

const AUTO_DELAY_MS = 500; // translate-as-you-type waits this long after the last keystroke

function syncControls() {
  const greedy = decoding() === "greedy";
  const beam = Number($("beam-size").value || 4);
  $("beam-size").disabled = greedy;
  $("beam-field").classList.toggle("disabled", greedy);
  const maxNbest = greedy ? 1 : beam;
  fillSelect($("nbest"), range(1, maxNbest), Math.min(state.nbestWanted, maxNbest));
  $("nbest").disabled = greedy;
  $("nbest-field").classList.toggle("disabled", greedy);
}

function rememberControls() {
  remember({
    model: state.modelId,
    decoding: decoding(),
    beam_size: Number($("beam-size").value),
    nbest: state.nbestWanted,
    glossary: $("glossary").value,
    keep: $("keep").value,
    digits: $("digits").value,
    auto: $("auto-translate").checked,
  });
}

async function loadModels() {
  try {
    const info = await api("/models");
    state.models = info.models;
    state.limits = info.limits;
    const saved = remembered();
    const model = modelById(saved.model) || info.models[0];
    fillSelect($("model-select"), info.models.map((m) => m.id), model.id, (id) => modelTitle(modelById(id)));
    $("model-field").hidden = info.models.length < 2;
    $("char-limit").textContent = String(state.limits.max_text_chars);
    updateCount();
    const beam = saved.beam_size || (model.default_beam_size > 1 ? model.default_beam_size : 4);
    fillSelect($("beam-size"), range(1, state.limits.max_beam_size), Math.min(beam, state.limits.max_beam_size));
    if (saved.decoding === "greedy" || saved.decoding === "beam") $(`mode-${saved.decoding}`).checked = true;
    if (saved.nbest) state.nbestWanted = saved.nbest;
    if (typeof saved.glossary === "string") $("glossary").value = saved.glossary;
    if (typeof saved.keep === "string") $("keep").value = saved.keep;
    if (saved.digits === "latin" || saved.digits === "devanagari") $("digits").value = saved.digits;
    if ($("glossary").value.trim() || $("keep").value.trim() || $("digits").value !== "latin") {
      $("glossary-field").open = true;
    }
    $("auto-translate").checked = saved.auto === true;
    syncControls();
    selectModel(model.id);
    checkScript(); // a remembered direction may not be the language of the text in the box
  } catch (err) {
    $("model-info").textContent = "model unavailable";
    showError(`Could not load the model description: ${err.message}`);
  }
}

// Swap the languages: the other direction's model, the translation moved into the text box
// and translated back (the reader's next step in every translator).
async function swapDirection() {
  const model = currentModel();
  const reverse = model && reverseOf(model);
  if (!reverse) return;
  if (state.busy) stopTranslation();
  const moved = state.result && state.result.model === model.id ? state.result.text : "";
  if (moved) {
    $("source").value = moved;
    updateCount();
  }
  selectModel(reverse.id);
  rememberControls();
  $("source").focus();
  if (moved) await translate();
}

function scheduleAutoTranslate() {
  clearTimeout(state.autoTimer);
  if (!$("auto-translate").checked) return;
  state.autoTimer = setTimeout(() => translate({ auto: true }), AUTO_DELAY_MS);
}

function highlightPair(index, on) {
  for (const el of document.querySelectorAll(`[data-index="${index}"]`)) el.classList.toggle("paired", on);
}

document.addEventListener("DOMContentLoaded", () => {
  fillSelect($("beam-size"), range(1, 16), 4);
  fillSelect($("nbest"), range(1, 4), 4);
  syncControls();
  updateCount();
  loadModels();
  for (const [type, on] of [["mouseover", true], ["focusin", true], ["mouseout", false], ["focusout", false]]) {
    for (const box of [$("output-card"), $("detail")]) {
      box.addEventListener(type, (e) => {
        const el = e.target.closest("[data-index]");
        if (el) highlightPair(el.dataset.index, on);
      });
    }
  }
  $("document").addEventListener("keydown", moveSentenceFocus);
  $("document").addEventListener("focusin", keepSentenceFocus);
  $("model-select").addEventListener("change", () => {
    selectModel($("model-select").value);
    rememberControls();
    checkScript();
  });
  $("swap-button").addEventListener("click", swapDirection);
  $("script-switch").addEventListener("click", async () => {
    selectModel($("script-switch").dataset.model);
    rememberControls();
    await translate();
  });
  $("nbest").addEventListener("change", () => {
    state.nbestWanted = Number($("nbest").value);
    rememberControls();
  });
  for (const radio of document.querySelectorAll("input[name=decoding]")) {
    radio.addEventListener("change", () => {
      syncControls();
      rememberControls();
    });
  }
  $("beam-size").addEventListener("change", () => {
    syncControls();
    rememberControls();
  });
  $("glossary").addEventListener("input", rememberControls);
  $("keep").addEventListener("input", rememberControls);
  $("digits").addEventListener("change", rememberControls);
  $("auto-translate").addEventListener("change", () => {
    rememberControls();
    scheduleAutoTranslate();
  });
  $("translate-form").addEventListener("submit", (e) => {
    e.preventDefault();
    translate();
  });
  $("stop-button").addEventListener("click", stopTranslation);
  $("browser-switch").addEventListener("change", () => switchToBrowser($("browser-switch").checked));
  document.addEventListener("keydown", (e) => {
    // (Escape in an open drop-down list closes the list only.)
    if (e.key === "Escape" && state.busy && document.activeElement.tagName !== "SELECT") stopTranslation();
  });
  $("source").addEventListener("input", () => {
    updateCount();
    // The text is no longer the opened document's, nor the one the pane translates.
    if (state.file) setDocument(null);
    if (state.busy) state.editedDuringRun = true; // marked once the run's result is shown
    else if (state.result) markStale(true);
    clearTimeout(state.detectTimer);
    state.detectTimer = setTimeout(checkScript, AUTO_DELAY_MS);
    scheduleAutoTranslate();
  });
  // The example text is selected when the box is first entered: typing or pasting replaces it
  // (a paste was added to it, and the example translated too).
  $("source").addEventListener("focus", () => {
    const box = $("source");
    if (box.value === box.defaultValue) setTimeout(() => box.select(), 0); // after the click's caret
  }, { once: true });
  $("source").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      translate();
    }
  });
  $("copy-button").addEventListener("click", copyTranslation);
  $("download-button").addEventListener("click", downloadTranslation);
  $("file-input").addEventListener("change", () => {
    const file = $("file-input").files[0];
    if (file) openDocument(file);
  });
  $("file-forget").addEventListener("click", () => setDocument(null));
  $("detail").addEventListener("toggle", () => {
    if ($("detail").open && state.result && !state.result.inBrowser && state.attentionOf !== state.result) {
      showAttention(Number($("sentence").value || 0));
    }
  });
  for (const radio of document.querySelectorAll("input[name=view]")) radio.addEventListener("change", drawHeatmap);
  $("layer").addEventListener("change", drawHeatmap);
  $("head").addEventListener("change", drawHeatmap);
  $("sentence").addEventListener("change", () => showAttention(Number($("sentence").value)));
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(drawHeatmap, 150);
  });
});
