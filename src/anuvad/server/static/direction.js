// The translation direction: the served model chosen, named in words with its data in plain
// words, and the warning (with a one-click switch) when the text is in the other language.

import { api } from "./api.js";
import { syncBrowserSwitch } from "./browser.js";
import { $, languageName } from "./dom.js";
import { clearOutput } from "./output.js";
import { currentModel, modelById, modelTitle, reverseOf, state } from "./state.js";

// The header's line about a model: its name in words, its data in plain words, and the
// technical description folded.
function describeModel(model) {
  const can = new Set(model.capabilities || []);
  const box = $("model-info");
  box.replaceChildren();
  const title = document.createElement("strong");
  title.textContent = modelTitle(model);
  const data = document.createElement("div");
  data.className = "trained-on";
  data.id = "trained-on";
  data.textContent = model.summary || model.trained_on;
  // Its terms of use (GET /models: the model card's licence, or its training data's), said
  // where the model is named; nothing when the server does not know them.
  const licence = document.createElement("div");
  licence.className = "licence";
  licence.id = "model-licence";
  licence.hidden = !model.licence;
  licence.textContent = model.licence ? `Licence: ${model.licence}` : "";
  licence.title = model.licence_note || "";
  const about = document.createElement("details");
  about.className = "about";
  about.id = "model-about";
  const summary = document.createElement("summary");
  summary.textContent = "About this model";
  const params = model.num_parameters >= 1e6
    ? `${(model.num_parameters / 1e6).toFixed(1)} M` : `${(model.num_parameters / 1e3).toFixed(0)} k`;
  const facts = document.createElement("div");
  facts.textContent = `${model.name} · ${params} parameters · ${model.engine} engine`;
  const confidence = document.createElement("div");
  confidence.id = "confidence-info";
  const auroc = model.confidence && model.confidence.held_out_auroc;
  confidence.textContent = auroc
    ? "Confidence: calibrated on dev data; finds bad sentences with AUROC " +
      Object.entries(auroc).filter(([, v]) => v !== null).map(([k, v]) => `${v.toFixed(2)} (${k})`).join(", ")
    : can.has("quality")
      ? "Confidence: not calibrated for this model (word probabilities only)"
      : `Confidence: not given by the ${model.engine} engine`;
  const json = document.createElement("a");
  json.href = "/models";
  json.textContent = "description for programs (JSON)";
  const terms = document.createElement("div");
  terms.id = "licence-note";
  terms.textContent = model.licence ? `Licence: ${model.licence} (${model.licence_note})` : "";
  terms.hidden = !model.licence;
  about.append(summary, facts, confidence, terms, json);
  box.append(title, data, licence, about);
}

// Translate with model ``id``: the languages' names, the Terms box where the engine takes a
// glossary, the swap button where the other direction is served. A translation shown from
// another model is cleared, never left under the new language's heading (issue 34 item 5).
export function selectModel(id) {
  const model = modelById(id);
  if (!model) return;
  state.modelId = id;
  $("model-select").value = id;
  $("src-name").textContent = languageName(model.src_lang);
  $("tgt-name").textContent = languageName(model.tgt_lang);
  $("document").lang = model.tgt_lang;
  $("source").lang = model.src_lang;
  $("source").placeholder = `Type or paste ${languageName(model.src_lang)} text here…`;
  document.title = `anuvad · ${modelTitle(model)}`;
  // What the engine can do (GET /models): Terms where a glossary is accepted, names and digits
  // where numbers and names are copied (digits only into Hindi).
  const can = new Set(model.capabilities || []);
  $("terms-label").hidden = !can.has("glossary");
  $("keep-label").hidden = !can.has("verbatim");
  $("digits-label").hidden = !can.has("verbatim") || model.tgt_lang !== "hi";
  // Names in Devanagari (POST /translate's names "model"): English→Hindi through a search that
  // takes required phrases.
  $("names-label").hidden = !can.has("glossary") || model.src_lang !== "en" || model.tgt_lang !== "hi";
  $("glossary-field").hidden = !can.has("glossary") && !can.has("verbatim");
  const reverse = reverseOf(model);
  $("swap-button").hidden = !reverse;
  if (reverse) $("swap-button").title = `Swap: ${modelTitle(reverse)}; the translation becomes the text to translate`;
  describeModel(model);
  syncBrowserSwitch();
  if (state.result && state.result.model !== id) clearOutput();
  hideScriptWarning();
}

// Text mostly in another script than the direction's source language (Hindi typed with
// English → Hindi chosen) would come back as nonsense, and the server refuses it: the page says
// so while the reader types, with a button that switches to the direction that reads it
// (issue 34 item 5). POST /detect tells the language by the script of the letters.
// Returns whether the text is in another language than the direction's.
export async function checkScript() {
  const text = $("source").value;
  const model = currentModel();
  const seq = ++state.detectSeq;
  if (!text.trim() || !model || (state.file && state.file.format === "html")) {
    hideScriptWarning();
    return false;
  }
  let found;
  try {
    found = await api("/detect", { text: Array.from(text).slice(0, state.limits.max_text_chars).join("") });
  } catch {
    return false; // a server without /detect: the translation's own answer says what is wrong
  }
  if (seq !== state.detectSeq) return false; // the text changed meanwhile
  if (!found.language || found.language === model.src_lang || found.confidence < 0.5) {
    hideScriptWarning();
    return false;
  }
  const other = modelById(found.model);
  const better = other && (state.models.find((m) => m.src_lang === other.src_lang && m.tgt_lang === model.src_lang) || other);
  $("script-warning-text").textContent = `This text looks ${languageName(found.language)}, but ${modelTitle(model)} translates from ${languageName(model.src_lang)}.`
    + (better ? "" : ` No served model translates from ${languageName(found.language)}.`);
  $("script-switch").hidden = !better;
  if (better) {
    $("script-switch").textContent = `Switch to ${modelTitle(better)}`;
    $("script-switch").dataset.model = better.id;
  }
  $("script-warning").hidden = false;
  return true;
}

export function hideScriptWarning() {
  $("script-warning").hidden = true;
}
