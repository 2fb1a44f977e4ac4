// anuvad web page: talks to the JSON API of the same server (POST /translate, POST /attention,
// GET /models). Plain browser JavaScript, no build step, no libraries, nothing fetched elsewhere.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

const state = {
  limits: { max_text_chars: 20000, max_sentence_chars: 600, max_texts: 64, max_beam_size: 16 },
  attention: null, // the last /attention response
  settings: null, // the decode settings of the last translation
  sources: [], // the sentences of the last translation
  models: [], // GET /models: every served model, the default first
  modelId: null, // the model the page translates with
  busy: false,
  controller: null, // aborts the translation in flight (the Stop button, Escape)
  attentionSeq: 0, // each /attention request's number: only the newest answer is drawn
  nbestWanted: 4, // the n-best the reader chose (kept while greedy search hides it)
};

// ---------------------------------------------------------------- API

// A server started with --api-key-file answers 401 without a key: the page asks for one once
// and keeps it for this tab only (sessionStorage).
function apiKey() {
  return sessionStorage.getItem("anuvad-api-key") || "";
}

// An HTTP header carries printable ASCII only (fetch throws on anything else).
const VALID_KEY = /^[\x21-\x7e]+$/;

// ``signal`` (an AbortController's) stops the request: it then throws an error whose
// ``stopped`` is true; the server notices the closed connection and stops the search too.
async function api(path, body, retried = false, signal = undefined) {
  const headers = {};
  if (apiKey() && !VALID_KEY.test(apiKey())) sessionStorage.removeItem("anuvad-api-key");
  if (apiKey()) headers.Authorization = `Bearer ${apiKey()}`;
  const options = body === undefined ? { headers } : {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  if (signal) options.signal = signal;
  let response;
  try {
    response = await fetch(path, options);
  } catch (err) {
    if (err.name === "AbortError") throw Object.assign(new Error("stopped"), { stopped: true });
    throw new Error(`cannot reach the server (${err.message})`);
  }
  if (response.status === 401 && !retried) {
    const key = (window.prompt("This server needs an API key (ask its operator):", "") || "").trim();
    if (key && !VALID_KEY.test(key)) throw new Error("401: an API key is printable ASCII without spaces");
    if (key) {
      sessionStorage.setItem("anuvad-api-key", key);
      return api(path, body, true, signal);
    }
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    // Stopped while the answer was still arriving: the body is cut off.
    if (err.name === "AbortError") throw Object.assign(new Error("stopped"), { stopped: true });
    data = null;
  }
  if (!response.ok) {
    let message = (data && data.error) || response.statusText || "no answer";
    if (response.status === 503) {
      const wait = response.headers.get("Retry-After");
      message = `the server is busy; try again${wait ? ` in ${wait} s` : " shortly"} (${message})`;
    }
    throw new Error(`${response.status}: ${message}`);
  }
  if (data === null) throw new Error(`${response.status}: the server's answer was not JSON`);
  return data;
}

function showError(message) {
  const box = $("error");
  box.textContent = message;
  box.hidden = !message;
}

// ---------------------------------------------------------------- setup

function fillSelect(select, values, selected, label) {
  select.replaceChildren();
  for (const value of values) {
    const option = document.createElement("option");
    option.value = String(value);
    option.textContent = label ? label(value) : String(value);
    if (String(value) === String(selected)) option.selected = true;
    select.append(option);
  }
}

function range(from, to) {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function decoding() {
  return document.querySelector("input[name=decoding]:checked").value;
}

function syncControls() {
  const greedy = decoding() === "greedy";
  const beam = Number($("beam-size").value || 4);
  $("beam-size").disabled = greedy;
  $("beam-field").classList.toggle("disabled", greedy);
  const maxNbest = greedy ? 1 : beam;
  const current = Math.min(state.nbestWanted, maxNbest);
  fillSelect($("nbest"), range(1, maxNbest), current);
  $("nbest").disabled = greedy;
  $("nbest-field").classList.toggle("disabled", greedy);
}

// Lengths as the server counts them: code points (an emoji is one character, two UTF-16 units).
const charCount = (text) => Array.from(text).length;

function updateCount() {
  const length = charCount($("source").value);
  $("char-count").textContent = String(length);
  $("char-count").parentElement.classList.toggle("over", length > state.limits.max_text_chars);
}

const LANGUAGES = { en: "English", hi: "Hindi", de: "German", fr: "French" };
const languageName = (code) => LANGUAGES[code] || code;

// Show one served model: the languages, its size and what it was trained on.
function showModel(model) {
  state.modelId = model.id;
  $("src-name").textContent = languageName(model.src_lang);
  $("tgt-name").textContent = languageName(model.tgt_lang);
  $("source").placeholder = `Type or paste ${languageName(model.src_lang)} text here…`;
  // What the engine can do (GET /models): the Terms box only where a glossary is accepted.
  const can = new Set(model.capabilities || []);
  $("glossary-field").hidden = !can.has("glossary");
  if (model.default_beam_size > 1) {
    $("beam-size").value = String(Math.min(model.default_beam_size, state.limits.max_beam_size));
    syncControls();
  }
  const params = model.num_parameters >= 1e6
    ? `${(model.num_parameters / 1e6).toFixed(1)} M` : `${(model.num_parameters / 1e3).toFixed(0)} k`;
  $("model-info").innerHTML = "";
  const strong = document.createElement("strong");
  strong.textContent = model.name;
  $("model-info").append(strong, ` · ${model.src_lang} → ${model.tgt_lang} · ${params} parameters`);
  const data = document.createElement("div");
  data.className = "trained-on";
  data.id = "trained-on";
  data.textContent = model.trained_on;
  $("model-info").append(data);
  const confidence = document.createElement("div");
  confidence.className = "trained-on";
  confidence.id = "confidence-info";
  const auroc = model.confidence && model.confidence.held_out_auroc;
  confidence.textContent = auroc
    ? "Confidence: calibrated on dev data; finds bad sentences with AUROC " +
      Object.entries(auroc).filter(([, v]) => v !== null).map(([k, v]) => `${v.toFixed(2)} (${k})`).join(", ")
    : can.has("quality")
      ? "Confidence: not calibrated for this model (word probabilities only)"
      : `Confidence: not given by the ${model.engine} engine`;
  $("model-info").append(confidence);
}

async function loadModel() {
  try {
    const info = await api("/models");
    state.models = info.models;
    state.limits = info.limits;
    // Several models (e.g. both directions): the page lets the reader choose.
    fillSelect($("model-select"), info.models.map((m) => m.id), info.models[0].id, (id) => {
      const m = info.models.find((x) => x.id === id);
      return `${languageName(m.src_lang)} → ${languageName(m.tgt_lang)} (${m.name})`;
    });
    $("model-field").hidden = info.models.length < 2;
    showModel(info.models[0]);
    const model = info.models[0];
    $("char-limit").textContent = String(state.limits.max_text_chars);
    updateCount();
    fillSelect($("beam-size"), range(1, state.limits.max_beam_size), Math.min(model.default_beam_size > 1 ? model.default_beam_size : 4, state.limits.max_beam_size));
    syncControls();
  } catch (err) {
    $("model-info").textContent = "model unavailable";
    showError(`Could not load the model description: ${err.message}`);
  }
}

// ---------------------------------------------------------------- translation

// The whole text goes to the server, which splits it into sentences and keeps its layout.
function sourceText() {
  return $("source").value;
}

function settings() {
  const greedy = decoding() === "greedy";
  return {
    decoding: decoding(),
    beam_size: greedy ? 1 : Number($("beam-size").value),
    nbest: greedy ? 1 : Number($("nbest").value),
    model: state.modelId,
  };
}

function setBusy(busy) {
  state.busy = busy;
  const button = $("translate-button");
  button.disabled = busy;
  button.classList.toggle("busy", busy);
  button.querySelector(".button-label").textContent = busy ? "Translating…" : "Translate";
  $("stop-button").hidden = !busy;
}

// Stop the translation in flight (the page keeps what it showed before, marked out of date);
// the focus, on the Stop button that now hides, goes back to the text.
function stopTranslation() {
  if (!state.controller) return;
  state.controller.abort();
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

// "glossary.2.target: ..." (the server's 0-based index) → "Terms, line 4: ...".
function nameTermLines(message, lines) {
  return message.replace(/glossary\.(\d+)(\.\w+)?/g, (_, i) => `Terms, line ${lines[Number(i)] ?? Number(i) + 1}`);
}

function markStale(stale) {
  $("output-card").classList.toggle("stale", stale);
  $("stale-note").hidden = !stale;
}

async function translate(event) {
  if (event) event.preventDefault();
  if (state.busy) return;
  showError("");
  $("status").textContent = "";
  const text = sourceText();
  if (!text.trim()) {
    showError("Type a sentence to translate.");
    return;
  }
  if (charCount(text) > state.limits.max_text_chars) {
    showError(`The text has ${charCount(text)} characters; this server takes up to ${state.limits.max_text_chars} per request. Translate it in parts.`);
    return;
  }
  const request = settings();
  let glossary;
  try {
    glossary = $("glossary-field").hidden ? { terms: [], lines: [] } : glossaryTerms();
  } catch (err) {
    showError(err.message);
    return;
  }
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  const started = performance.now();
  try {
    const body = {
      text,
      split_sentences: true,
      decoding: request.decoding,
      beam_size: request.decoding === "greedy" ? 4 : request.beam_size,
      nbest: request.nbest,
      model: request.model,
    };
    if (glossary.terms.length) body.glossary = glossary.terms;
    const result = await api("/translate", body, false, controller.signal);
    const roundTrip = performance.now() - started;
    state.settings = request;
    const lines = result.translations[0].sentences.map((s) => s.source);
    state.sources = lines;
    renderTranslations(result, roundTrip);
    markStale(false);
    const count = lines.length;
    $("status").textContent = `Translated ${count} sentence${count === 1 ? "" : "s"}.`;
    fillSelect($("sentence"), range(0, lines.length - 1), 0, (i) => `${i + 1}. ${truncate(lines[i], 40)}`);
    $("sentence-field").hidden = lines.length < 2;
  } catch (err) {
    if (err.stopped) $("status").textContent = "Stopped: nothing was translated.";
    else showError(nameTermLines(err.message, glossary.lines));
    if (!$("output-card").hidden) markStale(true);
    return;
  } finally {
    state.controller = null;
    setBusy(false);
  }
  // The attention view is extra: its failure (e.g. a sentence too long for it) is not the
  // translation's, and the translation is shown (and the button free) while it loads.
  await showAttention(0);
}

// The server's offsets count code points (Python); JavaScript strings index UTF-16 units, which
// differ after any character outside the Basic Multilingual Plane (e.g. an emoji).
function codeUnitIndex(text) {
  const offsets = [0];
  for (const ch of text) offsets.push(offsets[offsets.length - 1] + ch.length);
  return (i) => offsets[Math.max(0, Math.min(i, offsets.length - 1))];
}

// 0.0055 reads "<1%", not "0%": the page never claims certainty the model does not give.
const percent = (p) => (p < 0.01 ? "<1%" : p > 0.99 ? ">99%" : `${Math.round(p * 100)}%`);
const LOW_WORD_PROB = 0.5; // words below this are shaded, the less probable the darker

// The translation with every improbable word shaded; each word's probability in its tooltip.
function shadeWords(target, text, words) {
  if (!text) {
    target.textContent = "(empty output)";
    return;
  }
  const at = codeUnitIndex(text);
  let pos = 0;
  for (const w of words) {
    if (w.start < 0 || at(w.start) < pos) continue; // not found in the text, or overlapping: left plain
    target.append(text.slice(pos, at(w.start)));
    const span = document.createElement("span");
    span.className = "word";
    span.textContent = text.slice(at(w.start), at(w.end));
    span.title = `p = ${w.prob.toFixed(2)}`;
    if (w.prob < LOW_WORD_PROB) {
      span.classList.add("low");
      span.style.setProperty("--doubt", String(((LOW_WORD_PROB - w.prob) / LOW_WORD_PROB).toFixed(2)));
    }
    target.append(span);
    pos = at(w.end);
  }
  target.append(text.slice(pos));
}

function truncate(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

// The translated document with the source's layout; each sentence a span that, hovered or
// focused, highlights its sentence pair below (and the pair highlights it back).
function renderDocument(doc) {
  const box = $("document");
  box.replaceChildren();
  const at = codeUnitIndex(doc.source);
  let pos = 0;
  doc.sentences.forEach((s, i) => {
    box.append(doc.source.slice(pos, at(s.start)));
    const span = document.createElement("span");
    span.className = "doc-sentence";
    span.dataset.index = String(i);
    span.tabIndex = 0;
    span.title = s.likely_wrong ? `likely wrong (confidence ${percent(s.confidence)}) · ${s.source}` : s.source;
    span.classList.toggle("likely-wrong", s.likely_wrong === true);
    span.textContent = s.text || "(empty output)";
    box.append(span);
    pos = at(s.end);
  });
  box.append(doc.source.slice(pos));
  box.hidden = doc.sentences.length < 2 && !doc.source.trim().includes("\n");
}

function highlightPair(index, on) {
  for (const el of document.querySelectorAll(`[data-index="${index}"]`)) el.classList.toggle("paired", on);
}

function renderTranslations(result, roundTrip) {
  const list = $("translations");
  list.replaceChildren();
  const search = result.decoding === "greedy" ? "greedy search" : `beam search, beam ${result.beam_size}`;
  const doc = result.translations[0];
  const count = doc.sentences.length;
  const model = state.models.find((m) => m.id === result.model);
  const tgtLang = model ? model.tgt_lang : $("document").lang;
  $("tgt-name").textContent = languageName(tgtLang);
  $("document").lang = tgtLang;
  $("timing").textContent = `${count} sentence${count === 1 ? "" : "s"} · ${result.elapsed_ms.toFixed(0)} ms on the server · ${roundTrip.toFixed(0)} ms in all · ${search}`;
  renderDocument(doc);
  doc.sentences.forEach((t, i) => {
    const item = document.createElement("li");
    item.className = "translation";
    const source = document.createElement("div");
    source.className = "source";
    source.textContent = t.source;
    const target = document.createElement("p");
    target.className = "target";
    target.lang = tgtLang;
    shadeWords(target, t.text, t.words || []);
    item.append(source, target);
    if (t.confidence !== null && t.confidence !== undefined) {
      const note = document.createElement("div");
      note.className = t.likely_wrong ? "confidence likely-wrong" : "confidence";
      note.textContent = t.likely_wrong
        ? `⚠ likely wrong · confidence ${percent(t.confidence)}`
        : `confidence ${percent(t.confidence)}`;
      note.title = "calibrated probability that this translation is good (sentence chrF++ ≥ 30 on dev data)";
      item.append(note);
      item.classList.toggle("likely-wrong", t.likely_wrong === true);
    }
    if (!t.finished) {
      const note = document.createElement("div");
      note.className = "unfinished";
      note.textContent = "stopped at the length limit";
      item.append(note);
    }
    if (t.terms && t.terms.length) {
      const terms = document.createElement("div");
      terms.className = "terms";
      terms.textContent = "Terms: " + t.terms.map((x) => `${x.source} → ${x.target}${x.used ? " ✓" : " ✗"}`).join(", ");
      item.append(terms);
    }
    item.append(nbestTable(t.nbest, tgtLang));
    item.dataset.index = String(i);
    list.append(item);
  });
  $("output-card").hidden = false;
}

function nbestTable(nbest, lang) {
  const details = document.createElement("details");
  details.className = "nbest";
  details.open = nbest.length > 1;
  const summary = document.createElement("summary");
  summary.textContent = nbest.length > 1 ? `${nbest.length} best candidates` : "score";
  details.append(summary);
  const table = document.createElement("table");
  table.innerHTML = "<thead><tr><th>#</th><th>candidate</th><th class=\"num\">score</th><th class=\"num\">log p</th></tr></thead>";
  const body = document.createElement("tbody");
  const scores = nbest.map((c) => c.score);
  const best = Math.max(...scores);
  const worst = Math.min(...scores);
  nbest.forEach((c, i) => {
    const row = document.createElement("tr");
    if (i === 0) row.className = "best";
    const rank = document.createElement("td");
    rank.className = "num";
    rank.textContent = String(i + 1);
    const hyp = document.createElement("td");
    hyp.className = "hyp";
    hyp.lang = lang;
    hyp.textContent = c.text || "(empty)";
    const score = document.createElement("td");
    score.className = "num";
    const bar = document.createElement("span");
    bar.className = "score-bar";
    const share = best === worst ? 1 : (c.score - worst) / (best - worst);
    bar.style.width = `${Math.round(8 + 40 * share)}px`;
    score.append(bar, c.score.toFixed(3));
    const logp = document.createElement("td");
    logp.className = "num";
    logp.textContent = c.log_prob.toFixed(2);
    row.append(rank, hyp, score, logp);
    body.append(row);
  });
  table.append(body);
  details.append(table);
  return details;
}

// ---------------------------------------------------------------- attention

// The attention card for sentence ``index``, or a line saying why there is none.
async function showAttention(index) {
  const status = $("attention-status");
  status.hidden = true;
  const seq = ++state.attentionSeq;
  try {
    await loadAttention(index, seq);
  } catch (err) {
    if (seq !== state.attentionSeq) return; // a newer sentence was asked for meanwhile
    $("attention-card").hidden = true;
    status.textContent = `No attention view: ${err.message}`;
    status.hidden = false;
  }
}

async function loadAttention(index, seq) {
  const text = state.sources[index];
  if (!text || !state.settings) return;
  const limit = state.limits.max_sentence_chars;
  if (limit && charCount(text) > limit) {
    throw new Error(`sentence ${index + 1} has ${charCount(text)} characters; the view takes up to ${limit}`);
  }
  const s = state.settings;
  const view = await api("/attention", {
    text,
    decoding: s.decoding,
    beam_size: s.decoding === "greedy" ? 4 : s.beam_size,
    model: s.model,
  });
  if (seq !== state.attentionSeq) return; // a newer request was sent meanwhile
  state.attention = view;
  $("attention-timing").textContent = `${view.elapsed_ms.toFixed(0)} ms`;
  // An engine that cannot give every view says so (CTranslate2: one averaged head, no cosines).
  $("attention-note").textContent = view.note || "";
  $("attention-note").hidden = !view.note;
  const noCosine = view.cosine_similarity.length === 0;
  $("view-cosine").disabled = noCosine;
  if (noCosine) $("view-cross").checked = true;
  const layer = Math.min(Number($("layer").value || view.num_layers), view.num_layers);
  fillSelect($("layer"), range(1, view.num_layers), layer, (l) => `${l}${l === view.num_layers ? " (last)" : ""}`);
  const head = $("head").value || "avg";
  const heads = ["avg", ...range(1, view.num_heads)];
  fillSelect($("head"), heads, heads.map(String).includes(head) ? head : "avg", (h) => (h === "avg" ? "Average of heads" : `Head ${h}`));
  $("attention-card").hidden = false;
  drawHeatmap();
}

function currentMatrix() {
  const view = state.attention;
  if ($("view-cosine").checked) {
    return { matrix: view.cosine_similarity, kind: "cosine" };
  }
  const layer = view.cross_attention[Number($("layer").value) - 1];
  const head = $("head").value;
  if (head !== "avg") return { matrix: layer[Number(head) - 1], kind: "cross" };
  const rows = layer[0].length;
  const cols = rows ? layer[0][0].length : 0;
  const mean = Array.from({ length: rows }, () => new Array(cols).fill(0));
  for (const h of layer) {
    for (let t = 0; t < rows; t++) for (let s = 0; s < cols; s++) mean[t][s] += h[t][s] / layer.length;
  }
  return { matrix: mean, kind: "cross" };
}

function mix(a, b, t) {
  return a.map((v, i) => Math.round(v + (b[i] - v) * t));
}

// Sequential (white → indigo) for attention weights; diverging (blue ← white → red) for cosines.
const LOW = [247, 248, 255];
const MID = [129, 140, 248];
const HIGH = [49, 46, 129];
const NEG = [37, 99, 235];
const POS = [220, 38, 38];

function color(value, kind, scale) {
  if (kind === "cosine") {
    const t = Math.max(-1, Math.min(1, value / scale));
    const rgb = t >= 0 ? mix([255, 255, 255], POS, t) : mix([255, 255, 255], NEG, -t);
    return `rgb(${rgb.join(",")})`;
  }
  const t = Math.max(0, Math.min(1, value / scale));
  const rgb = t < 0.5 ? mix(LOW, MID, t * 2) : mix(MID, HIGH, (t - 0.5) * 2);
  return `rgb(${rgb.join(",")})`;
}

function shownPiece(piece) {
  if (piece === "▁") return "␣";
  return piece.replace(/^▁/, "").replace(/▁/g, " ") || piece;
}

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function drawHeatmap() {
  const view = state.attention;
  if (!view) return;
  const cosine = $("view-cosine").checked;
  $("layer").disabled = cosine;
  $("head").disabled = cosine;
  $("layer-field").classList.toggle("disabled", cosine);
  $("head-field").classList.toggle("disabled", cosine);
  $("attention-explain").textContent = cosine
    ? "Cosine similarity between each output position's final decoder state (row) and each input token's encoder output (column)."
    : "How strongly each output token (row) attends to each input token (column); each row sums to 1.";

  const { matrix, kind } = currentMatrix();
  const src = view.src_tokens.map(shownPiece);
  const tgt = view.tgt_tokens.map(shownPiece);
  let scale = 0;
  for (const row of matrix) for (const v of row) scale = Math.max(scale, Math.abs(v));
  if (scale === 0) scale = 1;

  const narrow = window.innerWidth < 600;
  const cell = Math.max(narrow ? 18 : 22, Math.min(narrow ? 28 : 36, Math.floor((narrow ? 300 : 640) / Math.max(1, src.length))));
  const longest = (tokens) => tokens.reduce((m, t) => Math.max(m, t.length), 1);
  const left = Math.min(150, 14 + 8.5 * longest(tgt));
  const top = Math.min(130, 14 + 6.5 * longest(src));
  const width = left + cell * src.length + 8;
  const height = top + cell * tgt.length + 8;

  const root = $("heatmap");
  root.replaceChildren();
  root.setAttribute("width", width);
  root.setAttribute("height", height);
  root.setAttribute("viewBox", `0 0 ${width} ${height}`);

  const colLabels = src.map((token, s) => {
    const x = left + s * cell + cell / 2;
    const label = svg("text", {
      x, y: top - 6, "text-anchor": "start",
      transform: `rotate(-55 ${x} ${top - 6})`,
      class: view.src_tokens[s].startsWith("<") ? "src special" : "src",
    }, token);
    root.append(label);
    return label;
  });
  const rowLabels = tgt.map((token, t) => {
    const label = svg("text", {
      x: left - 6, y: top + t * cell + cell / 2 + 4, "text-anchor": "end",
      class: view.tgt_tokens[t].startsWith("<") ? "tgt special" : "tgt",
    }, token);
    root.append(label);
    return label;
  });

  const cells = svg("g", { class: "cells" });
  matrix.forEach((row, t) => {
    row.forEach((value, s) => {
      const rect = svg("rect", {
        x: left + s * cell, y: top + t * cell, width: cell, height: cell,
        fill: color(value, kind, scale), class: "cell", "data-t": t, "data-s": s,
      });
      cells.append(rect);
    });
  });
  root.append(cells);

  const show = (rect, event) => {
    const t = Number(rect.dataset.t);
    const s = Number(rect.dataset.s);
    const value = matrix[t][s];
    rowLabels.forEach((l, i) => l.classList.toggle("hl", i === t));
    colLabels.forEach((l, i) => l.classList.toggle("hl", i === s));
    const what = kind === "cosine" ? "cosine" : "attention";
    const text = `${view.tgt_tokens[t]} → ${view.src_tokens[s]}: ${what} ${value.toFixed(3)}`;
    $("readout").innerHTML = "";
    const strong = document.createElement("strong");
    strong.textContent = value.toFixed(3);
    $("readout").append(`${what} of output “${view.tgt_tokens[t]}” to input “${view.src_tokens[s]}”: `, strong);
    const tip = $("tooltip");
    tip.textContent = text;
    tip.hidden = false;
    const wrap = $("heatmap-wrap");
    const box = wrap.getBoundingClientRect();
    const x = (event ? event.clientX : rect.getBoundingClientRect().left) - box.left + wrap.scrollLeft + 12;
    const y = (event ? event.clientY : rect.getBoundingClientRect().top) - box.top + wrap.scrollTop + 12;
    tip.style.left = `${Math.min(x, wrap.scrollLeft + box.width - tip.offsetWidth - 4)}px`;
    tip.style.top = `${y}px`;
  };
  const pointer = (e) => {
    if (!e.target.classList.contains("cell")) return;
    $("readout").removeAttribute("aria-live"); // a moving mouse would flood a screen reader
    show(e.target, e);
  };
  cells.addEventListener("mousemove", pointer);
  cells.addEventListener("click", pointer);
  cells.addEventListener("mouseleave", () => { $("tooltip").hidden = true; });
  // Keyboard: the heatmap takes focus; arrow keys move a cursor cell whose value is read out.
  root.setAttribute("tabindex", "0");
  root.setAttribute("aria-label", "attention heatmap; arrow keys read its cells");
  let cursor = { t: 0, s: 0 };
  root.onkeydown = (e) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (!(e.key in moves) || !matrix.length) return;
    e.preventDefault();
    const [dt, ds] = moves[e.key];
    cursor = {
      t: Math.max(0, Math.min(matrix.length - 1, cursor.t + dt)),
      s: Math.max(0, Math.min(matrix[0].length - 1, cursor.s + ds)),
    };
    const rect = cells.querySelector(`rect[data-t="${cursor.t}"][data-s="${cursor.s}"]`);
    for (const old of cells.querySelectorAll(".cursor")) old.classList.remove("cursor");
    rect.classList.add("cursor");
    $("readout").setAttribute("aria-live", "polite");
    show(rect, null);
  };

  $("legend-min").textContent = kind === "cosine" ? (-scale).toFixed(2) : "0";
  $("legend-max").textContent = scale.toFixed(2);
  $("legend-bar").style.background = kind === "cosine"
    ? `linear-gradient(90deg, rgb(${NEG}), #fff, rgb(${POS}))`
    : `linear-gradient(90deg, rgb(${LOW}), rgb(${MID}), rgb(${HIGH}))`;
}

// ---------------------------------------------------------------- wiring

document.addEventListener("DOMContentLoaded", () => {
  fillSelect($("beam-size"), range(1, 16), 4);
  fillSelect($("nbest"), range(1, 4), 4);
  syncControls();
  updateCount();
  loadModel();
  for (const type of ["mouseover", "focusin"]) {
    $("output-card").addEventListener(type, (e) => {
      const el = e.target.closest("[data-index]");
      if (el) highlightPair(el.dataset.index, true);
    });
  }
  for (const type of ["mouseout", "focusout"]) {
    $("output-card").addEventListener(type, (e) => {
      const el = e.target.closest("[data-index]");
      if (el) highlightPair(el.dataset.index, false);
    });
  }
  $("model-select").addEventListener("change", () => {
    const model = state.models.find((m) => m.id === $("model-select").value);
    if (model) showModel(model);
    if (!$("output-card").hidden) markStale(true); // the shown result is the other model's
  });
  $("nbest").addEventListener("change", () => { state.nbestWanted = Number($("nbest").value); });
  $("translate-form").addEventListener("submit", translate);
  $("stop-button").addEventListener("click", stopTranslation);
  document.addEventListener("keydown", (e) => {
    // (Escape in an open drop-down list closes the list only.)
    if (e.key === "Escape" && state.busy && document.activeElement.tagName !== "SELECT") stopTranslation();
  });
  $("source").addEventListener("input", updateCount);
  $("source").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) translate(e);
  });
  for (const radio of document.querySelectorAll("input[name=decoding]")) radio.addEventListener("change", syncControls);
  $("beam-size").addEventListener("change", syncControls);
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
