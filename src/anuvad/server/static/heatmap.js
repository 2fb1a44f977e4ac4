// The attention card: one sentence's cross-attention (per layer and head, or their average) or
// the cosine similarity of decoder states and encoder memory, drawn as an SVG heatmap that the
// mouse, a tap or the arrow keys read out.

import { api } from "./api.js";
import { $, charCount, fillSelect, range } from "./dom.js";
import { state } from "./state.js";

const SVG_NS = "http://www.w3.org/2000/svg";

let shown = null; // the /attention response drawn

// Show ``view`` (a /attention response): its translation, the layer and head choices, the map.
export function showAttentionView(view) {
  shown = view;
  $("attention-timing").textContent = `${view.elapsed_ms.toFixed(0)} ms`;
  $("attention-translation").replaceChildren("Of the translation ");
  const text = document.createElement("q");
  text.lang = $("document").lang;
  text.id = "attention-text";
  text.textContent = view.text;
  $("attention-translation").append(text);
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
  if ($("view-cosine").checked) {
    return { matrix: shown.cosine_similarity, kind: "cosine" };
  }
  const layer = shown.cross_attention[Number($("layer").value) - 1];
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

export function drawHeatmap() {
  const view = shown;
  if (!view) return;
  // The readout of the map drawn before names tokens not on this one: its instruction again.
  $("readout").textContent = "Hover over (or tap) a cell to see its value.";
  $("tooltip").hidden = true;
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
    // The pieces as the axes show them, without SentencePiece's ▁ (issue 40 item 10).
    const text = `${tgt[t]} → ${src[s]}: ${what} ${value.toFixed(3)}`;
    $("readout").innerHTML = "";
    const strong = document.createElement("strong");
    strong.textContent = value.toFixed(3);
    $("readout").append(`${what} of output “${tgt[t]}” to input “${src[s]}”: `, strong);
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

// Forget the drawn view (a new translation's heatmap is asked for when the detail is open).
export function clearAttention() {
  shown = null;
  $("attention-card").hidden = true;
  $("heatmap").replaceChildren();
}

// The attention card for sentence ``index`` of the shown translation, asked with the same
// settings and Terms (the heatmap is of the translation shown), or a line saying why there is none.
export async function showAttention(index) {
  const status = $("attention-status");
  status.hidden = true;
  const seq = ++state.attentionSeq;
  const result = state.result;
  try {
    const view = await loadAttention(index);
    if (seq !== state.attentionSeq || !view) return; // a newer sentence was asked for meanwhile
    state.attentionOf = result;
    showAttentionView(view);
  } catch (err) {
    if (seq !== state.attentionSeq) return;
    $("attention-card").hidden = true;
    status.textContent = `No attention view: ${err.message}`;
    status.hidden = false;
  }
}

async function loadAttention(index) {
  const text = state.sources[index];
  const s = state.request;
  if (!text || !s) return null;
  const limit = state.limits.max_sentence_chars;
  if (limit && charCount(text) > limit) {
    throw new Error(`sentence ${index + 1} has ${charCount(text)} characters; the view takes up to ${limit}`);
  }
  const view = await api("/attention", { text, decoding: s.decoding, beam_size: s.beam_size, model: s.model, ...s.fields });
  if (s.names) {
    // The view translates once: a sentence whose names were written in a second pass has the
    // heatmap of its first translation (quoted above the map).
    const said = "Names in Devanagari: a sentence translated again for its names has the heatmap of its first translation, quoted here.";
    view.note = view.note ? `${view.note} ${said}` : said;
  }
  return view;
}
