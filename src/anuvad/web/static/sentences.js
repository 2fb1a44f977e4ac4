// Sentences in the page, as the server finds them: a text cut into sentences that keep their
// place (src/anuvad/inference/documents.py, sentences.py, language.py: Moses' rules on a
// sentence-case view, the danda rule, sentences in another script kept as written). Every
// pattern comes from model.json's `text`, generated from those Python modules
// (src/anuvad/web/text_rules.py); the code around the patterns follows theirs line by line.

export const re = (pattern, flags = "gu") => new RegExp(pattern, flags);
// Python's str.isspace (JavaScript's \s differs: it has U+FEFF, lacks U+001C-001F and U+0085).
const isSpace = (c) => /^[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/u.test(c);
const isAlpha = (c) => /\p{L}/u.test(c);
const isLower = (c) => c !== c.toUpperCase() && c === c.toLowerCase();
const isUpper = (c) => c !== c.toLowerCase() && c === c.toUpperCase();
const sameLength = (c, f) => (f(c).length === c.length ? f(c) : c);

// --- Moses' splitter (the sentence-splitter package), on a sentence-case view of the line ---

const STARTER = "['\"(\\[\\u00bf\\u00a1\\p{Pi}]";
const UPPER_OR_OTHER = "[\\p{Lu}\\p{Lo}]";

function mosesSplit(text, prefixes) {
  if (!text) return [];
  text = text.replace(re(`([?!]) +(${STARTER}*${UPPER_OR_OTHER})`), "$1\n$2");
  text = text.replace(re(`(\\.[\\.]+) +(${STARTER}*${UPPER_OR_OTHER})`), "$1\n$2");
  text = text.replace(re(`([?!\\.][ ]*['")\\]\\p{Pf}]+) +(${STARTER}*[ ]*${UPPER_OR_OTHER})`), "$1\n$2");
  text = text.replace(re(`([?!\\.]) +(['"\\[\\u00bf\\u00a1\\p{Pi}]+[ ]*${UPPER_OR_OTHER})`), "$1\n$2");
  const words = text.split(/ +/u);
  const word = /([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200c\u200d.\-]*)(['")\]%\p{Pf}]*)(\.+)$/u;
  let out = "";
  for (let i = 0; i < words.length - 1; i++) {
    const match = word.exec(words[i]);
    if (match) {
      const [, prefix, punct] = match;
      if (prefix && prefixes[prefix] === "default" && !punct) {
        // a known honorific: no break
      } else if (/(\.)[\p{Lu}\p{Lo}-]+(\.+)$/u.test(words[i])) {
        // an upper-case acronym: no break
      } else if (re(`^([ ]*${STARTER}*[ ]*[\\p{Lu}\\p{Lo}0-9])`, "u").test(words[i + 1])) {
        const numeric = prefix && prefixes[prefix] === "numeric" && !punct && /^[0-9]+/u.test(words[i + 1]);
        if (!numeric) words[i] += "\n";
      }
    }
    out += `${words[i]} `;
  }
  out += words[words.length - 1];
  out = out.replace(/ +/gu, " ").replace(/\n /gu, "\n").replace(/ \n/gu, "\n").trim();
  return out.split("\n");
}

function sentenceCaseView(line, split) {
  const abbreviations = new Set(split.abbreviations);
  const initials = re(split.initials, "u");
  const letters = [...line].filter((c) => isAlpha(c) && c.toLowerCase() !== c.toUpperCase());
  const capitals = letters.filter(isUpper).length;
  let view = line;
  if (letters.length >= 8 && capitals > 0.6 * letters.length) {
    view = [...line].map((c) => sameLength(c, (x) => x.toLowerCase())).join("");
  }
  const starts = [...view.matchAll(re(split.next_start, "gud"))].filter((m) => {
    const mark = m.groups.mark;
    if (mark.includes("..") || mark.includes("…")) return false;
    const w = m.groups.word.toLowerCase().replace(/^["'“‘«([]+/u, "");
    return !abbreviations.has(w) && !initials.test(w);
  });
  const first = [...view].find((c) => isAlpha(c)) || "";
  const lower = starts.filter((m) => isLower(view.slice(m.indices.groups.letter[0], m.indices.groups.letter[1]))).length
    + (first && isLower(first) ? 1 : 0);
  if (2 * lower <= starts.length + 1) return view;
  const chars = view.split("");
  for (const m of starts) {
    const at = m.indices.groups.letter[0];
    const end = m.indices.groups.letter[1];
    const letter = view.slice(at, end);
    const upper = sameLength(letter, (x) => x.toUpperCase());
    chars.splice(at, end - at, upper, ...Array(end - at - 1).fill(""));
  }
  return chars.join("");
}

/** Per code point of `chars`, whether it is in a free run of symbols (symbols.symbol_mask): a
 * run is symbols (model.json's `split.symbol`) with the joiners and selectors after them
 * (`split.glue`); it is free when it holds an emoji (`split.emoji`) or no letter or digit
 * touches it (symbols.free_run). */
function symbolFlags(chars, split) {
  const symbol = re(`^${split.symbol}$`, "u");
  const glue = re(`^${split.glue}$`, "u");
  const emoji = re(`^${split.emoji}$`, "u");
  const alnum = /^[\p{L}\p{N}]$/u;
  let inRun = false;
  const runs = chars.map((c) => (inRun = symbol.test(c) || (inRun && glue.test(c))));
  const flags = chars.map(() => false);
  for (let i = 0; i < chars.length;) {
    if (!runs[i]) { i++; continue; }
    let j = i;
    while (j < chars.length && runs[j]) j++;
    const touching = (i > 0 && alnum.test(chars[i - 1])) || (j < chars.length && alnum.test(chars[j]));
    if (chars.slice(i, j).some((c) => emoji.test(c)) || !touching) flags.fill(true, i, j);
    i = j;
  }
  return flags;
}

/** Per UTF-16 unit of `text`, whether it is in a run of symbols. */
function unitSymbolFlags(text, split) {
  const chars = [...text];
  const flags = symbolFlags(chars, split);
  return chars.flatMap((c, i) => Array(c.length).fill(flags[i]));
}

/** [start, end) of each sentence in line, matching non-space characters in order; runs of
 * symbols between sentences are left out of both (with `split`'s patterns; none without). */
export function locate(sentences, line, split = null) {
  const spans = [];
  const chars = [...line];
  const symbols = split ? symbolFlags(chars, split) : chars.map(() => false);
  // offsets in UTF-16 units, as JavaScript strings index
  const offsets = [];
  let o = 0;
  for (const c of chars) { offsets.push(o); o += c.length; }
  offsets.push(o);
  let pos = 0;
  for (const sentence of sentences) {
    const wanted = [...sentence].filter((c) => !isSpace(c));
    if (wanted.length === 0) continue;
    while (pos < chars.length && (isSpace(chars[pos]) || symbols[pos])) {
      if (chars[pos] === wanted[0]) break; // a sentence that begins with a symbol
      pos++;
    }
    const start = pos;
    for (const c of wanted) {
      while (pos < chars.length && isSpace(chars[pos])) pos++;
      if (pos >= chars.length || chars[pos] !== c) return null;
      pos++;
    }
    spans.push([offsets[start], offsets[pos]]);
  }
  if (chars.slice(pos).some((c, i) => !(isSpace(c) || symbols[pos + i]))) return null;
  return spans;
}

function ruleSplit(text, split) {
  const pieces = [];
  const abbreviation = re(split.rule_abbreviation, "iu");
  const addresses = (text.includes(".") || text.includes("@"))
    ? [...text.matchAll(re(split.email)), ...text.matchAll(re(split.url, "giu")), ...text.matchAll(re(split.file, "gu"))]
      .map((a) => [a.index, a.index + a[0].length])
    : [];
  let start = 0;
  for (const m of text.matchAll(re(split.rule))) {
    const before = text.slice(Math.max(0, m.index - split.abbreviation_window), m.index);
    if (abbreviation.test(before) || addresses.some(([a, b]) => a < m.index && m.index < b)) continue; // "डॉ. राम", a link
    const end = m.index + m[0].trimEnd().length;
    pieces.push(text.slice(start, end));
    start = m.index + m[0].length;
  }
  pieces.push(text.slice(start));
  return pieces.map((p) => p.trim()).filter((p) => p);
}

/** sentences.split_glued: a sentence cut after each danda and each mark glued to the next one. */
function splitGlued(sentence, split) {
  const abbreviations = new Set(split.abbreviations);
  const initials = re(split.initials, "u");
  const pieces = [];
  let start = 0;
  for (const m of sentence.matchAll(re(split.glued))) {
    const w = (m.groups.word || "").toLowerCase();
    if (w && (abbreviations.has(w) || initials.test(w))) continue;
    const end = m.index + m[0].length;
    pieces.push(sentence.slice(start, end));
    start = end;
  }
  return pieces.length ? [...pieces, sentence.slice(start)] : [sentence];
}

/** The sentences of one line (sentences.sentence_splitter). */
export function splitLine(line, split) {
  if (split.kind === "rule") return ruleSplit(line, split);
  return mosesLine(line, split).flatMap((s) => splitGlued(s, split));
}

function mosesLine(line, split) {
  // Other white space and symbols are spaces in the view (as many as their UTF-16 units),
  // before the case is read.
  const plain = [...line.replace(re(split.other_space), " ")];
  const flags = symbolFlags(plain, split);
  const blank = plain.map((c, i) => (flags[i] ? " ".repeat(c.length) : c)).join("");
  const view = sentenceCaseView(blank, split);
  if (view === line) return mosesSplit(line, split.prefixes);
  const spans = locate(mosesSplit(view, split.prefixes), view);
  if (spans === null) return mosesSplit(line, split.prefixes);
  return spans.map(([a, b]) => line.slice(a, b));
}

const inRanges = (c, ranges) => ranges.some(([a, b]) => a <= c.codePointAt(0) && c.codePointAt(0) <= b);

/** language.language_letters: without addresses; in a text with non-Latin letters and no plain
 * lower-case Latin word, without its Latin words; the text without addresses if nothing else
 * is left. */
function languageLetters(text, split) {
  if (text.includes("@") || text.includes(".")) {
    text = text.replace(re(split.email), " ").replace(re(split.url, "giu"), " ").replace(re(split.file, "gu"), " ");
  }
  text = text.replace(re(split.code), " "); // "{{ user }}", "%s", "<b>": no language's
  if (![...text].some((c) => isAlpha(c) && !inRanges(c, split.latin))) return text;
  const words = text.split(/\s+/u).filter((w) => w);
  const latinOnly = (w) => { const l = [...w].filter(isAlpha); return l.length > 0 && l.every((c) => inRanges(c, split.latin)); };
  const plain = (w) => {
    const core = w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
    const edges = w.replace(core, "");
    const word = [...core].length > 1 && /^\p{L}+(?:['’-]\p{L}+)*$/u.test(core);
    return word && core === core.toLowerCase() && core !== core.toUpperCase() && ![...edges].some((c) => "{}<>%`$#@\\|~^*=".includes(c));
  };
  if (words.some((w) => latinOnly(w) && plain(w))) return text; // English words among them
  const kept = words.filter((w) => !latinOnly(w));
  return kept.some((w) => [...w].some(isAlpha)) ? kept.join(" ") : text;
}

/** language.wrong_script: most words are in another script than the source's (a word is in
 * the script most of its letters and marks are in: language.script_share). */
function wrongScript(text, split) {
  if (!split.script || ![...text].some(isAlpha)) return false;
  const kept = languageLetters(text, split);
  if (![...kept].some(isAlpha)) return false;
  const words = kept.split(/\s+/u).map((w) => [...w].filter((c) => /^[\p{L}\p{M}]$/u.test(c))).filter((l) => l.length);
  if (!words.length) return false;
  const inside = words.filter((l) => 2 * l.filter((c) => inRanges(c, split.script)).length >= l.length).length;
  return inside / words.length < split.script_share;
}

/** The sentences of a text, each {start, end, text, line} (documents.split_document, without
 * cutting sentences too long for the model: those are cut by the model's limit instead). */
export function splitDocument(text, split) {
  const segments = [];
  let offset = 0;
  const marker = re(split.list_marker, "uy");
  let fenced = false;
  text.split("\n").forEach((line, number) => {
    // documents._FENCE: a Markdown code block (its fences and lines) is kept as written
    const fence = /^ {0,3}(?:```|~~~)/u.test(line);
    if (fence || fenced) {
      fenced = fenced !== fence;
      offset += line.length + 1;
      return;
    }
    // cells (a tab, a table's pipes: cells.cell_spans), each split on its own, after the line's
    // list marker (a marker followed by a tab is one)
    marker.lastIndex = 0;
    const lead = marker.exec(line);
    const rest = lead ? lead[0].length : 0;
    for (const [first, last] of cellSpans(line.slice(rest), split)) {
      const cell = line.slice(rest + first, rest + last);
      const base = offset + rest + first;
      marker.lastIndex = 0;
      const m = marker.exec(cell);
      const skip = m ? m[0].length : 0;
      const body = cell.slice(skip);
      const units = unitSymbolFlags(cell, split);
      if (body.trim()) {
        let spans = locate(splitLine(body, split), body, split);
        if (spans === null) {
          const left = body.length - body.trimStart().length;
          spans = [[left, body.trimEnd().length]];
        }
        for (const [a0, b0] of spans) {
          // symbols.without_edge_symbols: runs of symbols (and spaces) around a sentence are layout
          let a = skip + a0;
          let b = skip + b0;
          while (a < b && (units[a] || isSpace(cell[a]))) a++;
          while (b > a && (units[b - 1] || isSpace(cell[b - 1]))) b--;
          if (a === b || wrongScript(cell.slice(a, b), split)) continue; // layout, as written
          segments.push({ start: base + a, end: base + b, text: cell.slice(a, b), line: number });
        }
      }
    }
    offset += line.length + 1;
  });
  return segments;
}

/** [start, end] of each cell of a line (cells.cell_spans): a table row's pipes, a tab, or a
 * pipe between spaces where the language does not type it for the danda; none in a table's rule. */
function cellSpans(line, split) {
  if (re(split.table_rule, "u").test(line)) return [];
  const row = re(split.table_row, "u").test(line);
  const separator = re(row ? split.row_cells : split.cells, "gu");
  const spans = [];
  let start = 0;
  for (const m of line.matchAll(separator)) {
    spans.push([start, m.index]);
    start = m.index + m[0].length;
  }
  spans.push([start, line.length]);
  return spans;
}

/** Translations put in the places of their segments (documents.assemble; the page cuts no
 * sentence into parts, so no part's first word is lowered as there). */
export function assemble(text, segments, translations) {
  let out = "";
  let pos = 0;
  const digits = writtenDigits(translations);
  segments.forEach((s, i) => {
    // two sentences written with nothing between them get a space; a list marker before one
    // takes the translations' digits (markers.marker_digits)
    const between = markerDigits(text.slice(pos, s.start), digits);
    out += (between || (i && translations[i] ? " " : "")) + translations[i];
    pos = s.end;
  });
  return out + text.slice(pos);
}

const DEVANAGARI_DIGITS = "०१२३४५६७८९";

/** The digits translations write: "devanagari", "latin" or null (markers.written_digits). */
function writtenDigits(translations) {
  const text = translations.join("");
  const devanagari = [...text].some((c) => DEVANAGARI_DIGITS.includes(c));
  const latin = /[0-9]/u.test(text);
  if (devanagari && !latin) return "devanagari";
  const latinLetters = [...text].filter((c) => /^[A-Za-z]$/u.test(c)).length;
  const devanagariLetters = [...text].filter((c) => c >= "\u0900" && c <= "\u097f").length;
  return latin || latinLetters > devanagariLetters ? "latin" : null;
}

/** The text before an item with its list marker's number in `digits` (markers.marker_digits). */
function markerDigits(before, digits) {
  const m = digits === null ? null : /(?:^|(?<=\s)|(?<=\())([0-9०-९]{1,3})(?=[.)]\s+$)/u.exec(before);
  if (!m) return before;
  const a = m.index;
  const number = [...m[1]]
    .map((c) => (digits === "devanagari" ? DEVANAGARI_DIGITS[Number(c)] ?? c : String(DEVANAGARI_DIGITS.indexOf(c) >= 0 ? DEVANAGARI_DIGITS.indexOf(c) : c)))
    .join("");
  return before.slice(0, a) + number + before.slice(a + m[1].length);
}
