// How a translation is drawn: the document pane (the text with the source's layout, filled in
// sentence by sentence while a long text streams) and, in the folded detail, each sentence with
// its shaded words, confidence, terms and n-best candidates.

import { $, codeUnitIndex, percent } from "./dom.js";

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

function pendingMark() {
  const mark = document.createElement("span");
  mark.className = "pending";
  mark.textContent = "…";
  mark.title = "not translated yet";
  return mark;
}

// The translated text in the document pane with the layout of ``source``: ``sentences[i]`` is
// sentence i's SentenceOut, or missing while it is still being translated (``total`` in all),
// shown as "…" with the line breaks around it kept. Each sentence is a span that, hovered or
// focused, highlights its pair in the detail (and the pair highlights it back).
// Returns the text shown, without the marks of sentences still missing.
export function renderDocument(source, sentences, total) {
  const box = $("document");
  box.replaceChildren();
  const at = codeUnitIndex(source);
  let shown = "";
  const add = (text) => {
    box.append(text);
    shown += text;
  };
  let pos = 0;
  let missing = false;
  for (let i = 0; i < total; i++) {
    const s = sentences[i];
    if (!s) {
      missing = true;
      continue;
    }
    const gap = source.slice(pos, at(s.start));
    if (missing) {
      // The sentences in between are still coming: their place, with the gap's white space.
      const lead = gap.match(/^\s*/)[0];
      add(lead);
      box.append(pendingMark());
      add(lead.length === gap.length ? "" : gap.match(/\s*$/)[0]);
      missing = false;
    } else {
      add(gap);
    }
    const span = document.createElement("span");
    span.className = "doc-sentence";
    span.dataset.index = String(i);
    // One Tab stop for the whole translation (the arrow keys move between its sentences:
    // moveSentenceFocus): ten sentences were ten Tab stops before the controls.
    span.tabIndex = box.querySelector(".doc-sentence") ? -1 : 0;
    span.title = s.short
      ? `likely wrong: much shorter than its source · ${s.source}`
      : s.likely_wrong ? `likely wrong (confidence ${percent(s.confidence)}) · ${s.source}` : s.source;
    span.classList.toggle("likely-wrong", s.likely_wrong === true);
    span.textContent = s.text || "(empty output)";
    shown += s.text;
    box.append(span);
    pos = at(s.end);
  }
  if (missing) {
    add(source.slice(pos).match(/^\s*/)[0]);
    box.append(pendingMark());
  } else {
    add(source.slice(pos));
  }
  return shown;
}

// The arrow keys in the translation: the focus moves to the next or previous sentence (Home, End:
// the first, the last), which becomes the pane's one Tab stop.
export function moveSentenceFocus(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return; // the browser's
  const spans = [...$("document").querySelectorAll(".doc-sentence")];
  const at = spans.indexOf(document.activeElement);
  const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
  const to = event.key === "Home" ? 0 : event.key === "End" ? spans.length - 1 : at + (step ?? 0);
  if (at < 0 || to === at || to < 0 || to >= spans.length || (!step && !["Home", "End"].includes(event.key))) return;
  event.preventDefault();
  spans[at].tabIndex = -1;
  spans[to].tabIndex = 0;
  spans[to].focus();
}

// A sentence focused by a click or by the keys is the pane's one Tab stop.
export function keepSentenceFocus(event) {
  const span = event.target.closest(".doc-sentence");
  if (!span) return;
  for (const other of $("document").querySelectorAll(".doc-sentence")) other.tabIndex = -1;
  span.tabIndex = 0;
}

// An HTML document's translation: while it streams, the translated sentences of its text runs
// in order ("…" for those still coming); then the translated HTML itself, markup and all, as
// Download gives it. Returns the text shown.
export function renderMarkup(sentences, total, html) {
  const box = $("document");
  box.replaceChildren();
  if (html !== undefined) {
    box.textContent = html;
    return html;
  }
  const parts = [];
  for (let i = 0; i < total; i++) {
    if (i) box.append(" ");
    if (sentences[i]) {
      box.append(sentences[i].text);
      parts.push(sentences[i].text);
    } else {
      box.append(pendingMark());
    }
  }
  return parts.join(" ");
}

// Sentence by sentence, for the detail: the source, the translation with its improbable words
// shaded, the confidence, the terms used and the n-best candidates (``sentences`` may have
// holes: a stopped translation keeps what arrived).
export function renderSentenceList(sentences, tgtLang) {
  const list = $("translations");
  list.replaceChildren();
  const count = sentences.filter(Boolean).length;
  sentences.forEach((t, i) => {
    if (!t) return;
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
    const short = (t.sentences || []).some((x) => x.short);
    if (short) {
      const warn = document.createElement("div");
      warn.className = "confidence likely-wrong";
      warn.textContent = "⚠ likely wrong · much shorter than its source: part of it may be missing";
      item.append(warn);
      item.classList.add("likely-wrong");
    }
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
    if (t.copied && t.copied.length) {
      // Numbers, links, e-mail addresses and names copied exactly: ✓ arrived, ✗ did not (why).
      const copied = document.createElement("div");
      copied.className = "copied";
      copied.textContent = "Copied as written: " + t.copied.map((c) => {
        const shown = c.target === c.source ? c.source : `${c.source} → ${c.target}`;
        return `${shown}${c.present ? " ✓" : " ✗"}${c.note ? ` (${c.note})` : ""}`;
      }).join(", ");
      item.append(copied);
    }
    // One sentence: its candidates open (the detail itself is folded); many: each on demand.
    item.append(nbestTable(t.nbest, tgtLang, count === 1));
    item.dataset.index = String(i);
    list.append(item);
  });
}

function nbestTable(nbest, lang, open) {
  const details = document.createElement("details");
  details.className = "nbest";
  details.open = open;
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
    logp.textContent = c.log_prob == null ? "–" : c.log_prob.toFixed(2); // none in the browser
    row.append(rank, hyp, score, logp);
    body.append(row);
  });
  table.append(body);
  details.append(table);
  return details;
}

// The document pane before any translation (or after the direction changed).
export function renderPlaceholder() {
  const mark = document.createElement("span");
  mark.className = "placeholder";
  mark.id = "placeholder";
  mark.textContent = "The translation appears here.";
  $("document").replaceChildren(mark);
  $("translations").replaceChildren();
}
