// Documents in the page, as the server handles them: a text cut into sentences that keep their
// place (sentences.js), and each translation mended after the search: danda and quotes
// (punctuation.py), the source's links (links.py), then its numbers put back (numbers_back.py;
// the page's search, like the server's CTranslate2 engine, cannot be made to copy them). Every
// pattern comes from model.json's `text`, generated from those Python modules
// (src/anuvad/web/text_rules.py); the code around the patterns follows theirs line by line.

import { re } from "./sentences.js";

export { assemble, locate, splitDocument, splitLine } from "./sentences.js";

// --- after the search ---

function beforeFinalMark(text, words, rules) {
  const m = re(rules.punctuation.final, "u").exec(text);
  const cut = m ? m.index : text.length;
  return [text.slice(0, cut).trimEnd(), ...words].filter((p) => p).join(" ") + text.slice(cut).trimStart();
}

// --- links (verbatim.find_spans for links, links.carry_links) ---

// verbatim._bracketed: an address with the angle brackets around it ("<a@b.in>")
const bracketed = (text, a, b) =>
  text[a - 1] === "<" && text[b] === ">" ? [a - 1, b + 1] : [a, b];

/** The source's links and e-mail addresses as [start, end] spans, non-overlapping, in order
 * (find_spans with links only: the longer first, then the earlier). */
function linkSpans(text, rules) {
  const l = rules.links;
  const found = [...text.matchAll(re(l.email))].map((m) =>
    bracketed(text, m.index, m.index + m[0].length));
  for (const m of text.matchAll(re(l.url, "giu"))) {
    let url = m[0];
    while (url && l.url_trailing.includes(url[url.length - 1])) url = url.slice(0, -1);
    if (url.includes("(") && m[0].slice(url.length, url.length + 1) === ")") url += ")";
    found.push(bracketed(text, m.index, m.index + url.length));
  }
  for (const m of text.matchAll(re(l.file, "gu"))) found.push([m.index, m.index + m[0].length]);
  found.sort((a, b) => a[0] - a[1] - (b[0] - b[1]) || a[0] - b[0]);
  const chosen = [];
  for (const span of found) {
    if (!chosen.some(([a, b]) => span[0] < b && a < span[1])) chosen.push(span);
  }
  return chosen.sort((a, b) => a[0] - b[0]);
}

/** The links and e-mail addresses of `source` in order, a repeated one each time
 * (links.source_links). */
export function sourceLinks(source, rules) {
  return linkSpans(source, rules).map(([a, b]) =>
    source.slice(a, b).replace(/^<(.*)>$/su, "$1"));
}

/** `text` with each of the source's links as often as the source has it and no other
 * link-like text (links.carry_links). */
export function carryLinks(text, source, links, rules) {
  const l = rules.links;
  const linkish = re(l.linkish);
  if (!links.length && !re(l.linkish, "u").test(text)) return text;
  if (links.length) {
    // links._junk_or_kept: address fragments, three marked tokens, one bare, not in the source
    text = text.replace(re(l.junk_run), (run) => {
      const tokens = run.split(/\s+/u).filter((t) => t);
      const marked = tokens.filter((t) => !/^[\p{L}\p{N}]+$/u.test(t)).length;
      const bare = tokens.some((t) => !/[\p{L}\p{N}]/u.test(t));
      return marked >= 3 && bare && !source.includes(run) ? " " : run;
    });
  }
  const wanted = new Map();
  for (const k of links) wanted.set(k, (wanted.get(k) || 0) + 1);
  const longestFirst = [...wanted.keys()].sort((a, b) => b.length - a.length);
  const trailingWhole = re(`^(?:${l.linkish_trailing})$`, "u");
  const kept = new Map();
  const out = [];
  let pos = 0;
  let gap = -1;
  for (const m of text.matchAll(linkish)) {
    if (m.index < pos) continue; // inside a source link taken whole below
    out.push(text.slice(pos, m.index));
    // A source link the pattern took only the start of (a bare domain's path) is taken whole.
    const whole = longestFirst.find((k) => k.length > m[0].length && text.startsWith(k, m.index));
    const found = whole === undefined ? m[0] : whole;
    pos = m.index + found.length;
    const link = longestFirst.find((k) => found.startsWith(k));
    const rest = link === undefined ? "" : found.slice(link.length);
    if (link !== undefined && (!rest || (trailingWhole.test(rest) && !rest.includes("..")))) {
      if ((kept.get(link) || 0) < wanted.get(link)) {
        kept.set(link, (kept.get(link) || 0) + 1);
        out.push(link);
      }
      out.push(rest);
      continue;
    }
    const word = found.replace(/\.+$/u, "");
    if (source.includes(word) && !links.some((k) => k.includes(word))) {
      out.push(found);
      continue;
    }
    if (gap < 0) gap = out.join("").length;
    const tail = re(l.linkish_trailing, "u").exec(found);
    if (tail && !tail[0].includes(".")) out.push(tail[0]);
  }
  out.push(text.slice(pos));
  let cleaned = out.join("");
  const have = new Map();
  for (const k of wanted.keys()) {
    have.set(k, Math.max(kept.get(k) || 0, cleaned.split(k).length - 1));
  }
  const missing = []; // in the source's order, a repeated link each time it is short
  for (const k of links) {
    if (have.get(k) > 0) have.set(k, have.get(k) - 1);
    else missing.push(k);
  }
  if (missing.length && gap < 0) cleaned = beforeFinalMark(cleaned, missing, rules);
  else if (missing.length) {
    const before = cleaned.slice(0, gap).trimEnd();
    const after = cleaned.slice(gap).trimStart();
    const glue = /^[\p{L}\p{N}]/u.test(after) ? " " : "";
    cleaned = [before, ...missing].join(" ").trim() + glue + after;
  }
  cleaned = cleaned.replace(/ {2,}/gu, " ").trim();
  return cleaned.replace(re(l.space_before_end, "u"), "$1");
}

// --- addresses (placeholders.hide: a sentence of addresses alone is not translated) ---

/** What a sentence of addresses alone, or without letters, comes back as (placeholders.reveal):
 * its source, in Latin digits where it holds no address ("१२:३०" into English: "12:30"). */
export function revealAlone(hidden) {
  if (hidden.addresses.length) return hidden.source;
  return latin(hidden.source);
}

/** `text` with each link, e-mail address and file name replaced by a placeholder "Z1", "Z2" …
 * that does not otherwise occur in it, as the server's torch engine shows it to the model;
 * `spellable(s)`: the target vocabulary writes s (if it cannot write a placeholder, the text
 * stays as it is). Returns {text, names, addresses, source, only_addresses}: only_addresses,
 * nothing with letters outside the addresses, or no letters at all (Hidden.only_addresses). */
export function hideAddresses(text, rules, spellable) {
  const spans = linkSpans(text, rules);
  if (!spans.length) {
    const letterless = text.trim() !== "" && !/\p{L}/u.test(text); // nothing to translate
    return { text, names: [], addresses: [], source: text, only_addresses: letterless };
  }
  const bounds = [0, ...spans.flat(), text.length];
  let outside = "";
  for (let i = 0; i < bounds.length; i += 2) outside += text.slice(bounds[i], bounds[i + 1]);
  const alone = !/\p{L}/u.test(outside);
  if (!spellable("Z1")) return { text, names: [], addresses: [], source: text, only_addresses: alone };
  let first = 1;
  while (spans.some((_, k) => text.includes(`Z${first + k}`))) first += spans.length;
  const names = spans.map((_, k) => `Z${first + k}`);
  let hidden = "";
  let position = 0;
  spans.forEach(([a, b], k) => {
    hidden += text.slice(position, a) + names[k];
    position = b;
  });
  const addresses = spans.map(([a, b]) => text.slice(a, b));
  return { text: hidden + text.slice(position), names, addresses, source: text, only_addresses: alone };
}

// --- numbers ---

const latin = (number) => number.replace(/\p{Nd}/gu, (d) => {
  const code = d.codePointAt(0);
  for (const zero of [0x30, 0x966, 0x660, 0x6f0, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66]) {
    if (code >= zero && code <= zero + 9) return String(code - zero);
  }
  return d;
});

function numbersOf(text, rules) {
  const links = linkSpans(text, rules);
  const ordinals = new Set(smallOrdinals(text, rules).map((m) => m.index)); // "2nd" is a word
  return [...text.matchAll(re(rules.numbers.number))].filter(
    (m) => !links.some(([a, b]) => a <= m.index && m.index < b) && !ordinals.has(m.index),
  );
}

/** The small ordinals of a text ("1st" … "10th") outside its dates (ordinals.small_ordinals). */
function smallOrdinals(text, rules) {
  const dates = rules.numbers.dates.flatMap((p) => [...text.matchAll(re(p, "giu"))].map((m) => [m.index, m.index + m[0].length]));
  return [...text.matchAll(re(rules.numbers.small_ordinal, "giu"))].filter((m) => !dates.some(([a, b]) => a <= m.index && m.index < b));
}

/** text as the model reads it: an English small ordinal as its word ("2nd" → "second", "2ND" →
 * "SECOND") (ordinals.read_ordinals). */
export function readOrdinals(text, rules) {
  if (!rules.numbers.read_ordinals) return text;
  let out = "";
  let pos = 0;
  for (const m of smallOrdinals(text, rules)) {
    const word = rules.numbers.ordinal_words[Number(m[0].slice(0, -2)) - 1];
    const upper = m[0].slice(-2) === m[0].slice(-2).toUpperCase();
    out += text.slice(pos, m.index) + (upper ? word.toUpperCase() : word);
    pos = m.index + m[0].length;
  }
  return out + text.slice(pos);
}

/** The numbers of a source in Latin digits, in order (numbers_back.source_numbers). */
export function sourceNumbers(text, rules) {
  return numbersOf(text, rules).map((m) => latin(m[0]));
}

/** text holding each of numbers as often as listed, and no other (numbers_back.carry_numbers). */
export function carryNumbers(text, numbers, rules) {
  const count = (list) => list.reduce((c, n) => c.set(n, (c.get(n) || 0) + 1), new Map());
  const wanted = count(numbers);
  const found = numbersOf(text, rules);
  if (numbers.length === 0 && found.length === 0) return text;
  const present = count(found.map((m) => latin(m[0])));
  const lost = [];
  for (const n of new Set(numbers)) {
    for (let k = 0; k < Math.max(0, wanted.get(n) - (present.get(n) || 0)); k++) lost.push(n);
  }
  let out = "";
  let pos = 0;
  let removed = false;
  const used = new Map();
  for (const m of found) {
    const number = latin(m[0]);
    out += text.slice(pos, m.index);
    if ((used.get(number) || 0) < (wanted.get(number) || 0)) {
      used.set(number, (used.get(number) || 0) + 1);
      out += m[0];
    } else if (lost.length) {
      const replacement = lost.shift();
      used.set(replacement, (used.get(replacement) || 0) + 1);
      out += replacement;
    } else removed = true;
    pos = m.index + m[0].length;
  }
  out += text.slice(pos);
  if (removed) {
    out = out.replace(re(rules.numbers.empty), "").replace(/ {2,}/gu, " ").replace(re(rules.numbers.before_mark), "").trim();
  }
  return lost.length ? beforeFinalMark(out, lost, rules) : out;
}

// --- currency (currency.read_amounts, currency.write_currency) ---

/** The amounts of text with a currency code right before or after them, by start; none where
 * two readings overlap (currency._code_amounts). */
function codeAmounts(text, rules) {
  const c = rules.currency;
  const found = [...text.matchAll(re(c.code_before))].map((m) => ({ start: m.index, end: m.index + m[0].length, code: m[1], amount: m[2] }));
  for (const m of text.matchAll(re(c.code_after))) {
    if (!re(c.year, "u").test(m[1])) found.push({ start: m.index, end: m.index + m[0].length, code: m[2], amount: m[1] });
  }
  const alone = found.filter((a) => !found.some((b) => b !== a && b.start < a.end && a.start < b.end));
  return alone.sort((a, b) => a.start - b.start);
}

/** text as the model reads it: an amount with a currency code as the code's sign ("USD 25" →
 * "$25") into a language not written in Latin letters, and "₹" as the source language writes
 * the rupee ("Rs 500", "रु. 500") (currency.read_amounts). */
export function readAmounts(text, rules) {
  const c = rules.currency;
  if (c.signs_codes) {
    let out = "";
    let pos = 0;
    for (const a of codeAmounts(text, rules)) {
      if (!Object.prototype.hasOwnProperty.call(c.read, a.code)) continue;
      out += text.slice(pos, a.start) + c.read[a.code] + a.amount;
      pos = a.end;
    }
    text = out + text.slice(pos);
  }
  return c.rupee_read === null ? text : text.replace(re(c.rupee_sign), () => c.rupee_read);
}

/** text with one currency for each amount written with its sign: a currency word after it goes
 * where it names another currency ("€30 डॉलर" → "€30"), the sign where it names the same
 * ("$699 डॉलर" → "699 डॉलर"), its own name right before the sign goes ("R. ₹500" → "₹500")
 * (currency.write_currency). */
export function writeCurrency(text, rules) {
  const c = rules.currency;
  return text.replace(re(c.echoed, "giu"), "").replace(re(c.signed, "giu"), (...args) => {
    const m = args[args.length - 1];
    const scale = m.scale || "";
    if (m.word && c.names[m.sign].includes(m.word.toLowerCase())) return `${m.amount}${scale} ${m.word}`;
    return m.word || m.extra ? `${m.sign}${m.amount}${scale}` : args[0];
  });
}

function count(text, c) {
  return text.split(c).length - 1;
}

function drop(text, index) {
  let before = text.slice(0, index);
  const after = text.slice(index + 1);
  if (before.endsWith(" ") && (after.startsWith(" ") || !after)) before = before.slice(0, -1);
  return before + after;
}

function pair(text, source, opening, closing, rules) {
  let unpaired;
  if (opening === closing) unpaired = count(text, opening) % 2 === 1;
  else {
    unpaired = count(text, opening) === count(text, closing) + 1;
    if (count(text, closing) === count(text, opening) + 1 && !source.includes(opening)) {
      return drop(text, text.lastIndexOf(closing));
    }
  }
  if (!unpaired) return text;
  if (source.includes(opening) || source.includes(closing)) {
    const m = re(rules.punctuation.trailing, "u").exec(text);
    const cut = m ? m.index : text.length;
    return text.slice(0, cut) + closing + text.slice(cut);
  }
  return drop(text, text.lastIndexOf(opening));
}

/** text without each symbol run standing alone that source has none of, with a space beside it
 * (punctuation._without_lone_symbols). */
function withoutLoneSymbols(text, source, p) {
  let out = text;
  for (const m of [...text.matchAll(re(p.lone_symbols))].reverse()) {
    let a = m.index;
    let b = a + m[0].length;
    const digit = (c) => /^\p{Nd}$/u.test(c || "");
    if ([...m[0]].some((c) => source.includes(c)) || (a >= 2 && digit(text[a - 2]) && digit(text[b + 1]))) continue;
    if (a && out[a - 1] === " ") a -= 1;
    else if (out[b] === " ") b += 1;
    out = out.slice(0, a) + out.slice(b);
  }
  return /[\p{L}\p{N}]/u.test(out) ? out : text;
}

/** Consistent final punctuation and paired quotes (punctuation.punctuate). */
export function punctuate(text, source, rules) {
  const p = rules.punctuation;
  text = withoutLoneSymbols(text.trim(), source, p); // trim: a final "▁" piece's space
  if (p.capitalised && !re(p.source_x, "u").test(source)) text = text.replace(re(p.lone_x), ""); // "(X RBI)"
  const first = [...source].find((c) => /^\p{L}$/u.test(c)) || "";
  // a sentence, heading or cell, not a part of a long sentence cut at its clauses (_begins_sentence)
  const begins = source.split(/\s+/u).filter((w) => w).length <= 8 || /[।॥.?!]["'”’)\]]*\s*$/u.test(source);
  if (p.capitalised && begins && first && first.toUpperCase() === first.toLowerCase()) {
    // a first word in lower case from a source whose first letter has no case: "ram" → "Ram"
    text = text.replace(re(p.lower_start, "u"), (_, lead, word) => lead + word[0].toUpperCase() + word.slice(1));
  }
  if (p.danda) {
    text = text.replace(re(p.final_stop), p.danda_char).replace(re(p.lone_pipe), p.danda_char);
    text = text.replace(re(p.danda_run), p.danda_char).replace(re(p.space_before_danda), "");
  }
  const unended = re(p.source_end, "u").exec(source);
  if (unended) text = text.replace(re(p.output_stop, "u"), unended[1] || "");
  if (![..."'‘’"].some((q) => source.includes(q))) text = text.replace(re(p.stray_quotes, "u"), "");
  const marks = re(p.source_marks, "u").exec(source);
  if (marks) text = text.replace(re(p.output_marks, "u"), () => marks[1]);
  // 5'8": the inch mark is no quotation mark (a private-use character stands for it meanwhile)
  const inches = text.replace(re(p.height), (m) => m.slice(0, -1) + p.inch);
  text = pair(inches, source.replace(re(p.height), ""), '"', '"', rules).replaceAll(p.inch, '"');
  return pair(text, source, "“", "”", rules);
}

/** One translation of `source` mended as the server mends its CTranslate2 engine's: punctuation
 * and the source's links (each batch's candidates, punctuation.punctuate_candidates), then the
 * source's numbers put back, and one currency for each amount. */
export function mend(text, source, rules) {
  const linked = carryLinks(punctuate(text, source, rules), source, sourceLinks(source, rules), rules);
  const numbered = writeCurrency(carryNumbers(linked, sourceNumbers(source, rules), rules), rules);
  return withoutInventedHalves(numbered, source, rules);
}

/** From Hindi into English, no "am" or "pm" after a clock where the source names no part of
 * the day (dates.without_invented_halves). */
function withoutInventedHalves(text, source, rules) {
  const h = rules.halves;
  if (!h || re(h.day_words, "u").test(source)) return text;
  const clocks = new Set([...source.matchAll(re(h.clock))].map((m) => latin(m[1])));
  for (const clock of clocks) {
    const escaped = clock.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");
    text = text.replace(re(`(?<![\\d.:])${escaped}${h.half}`, "giu"), (m, offset, whole) => {
      const ended = m.endsWith(".") && !whole.slice(offset + m.length).trim();
      return clock + (ended ? "." : "");
    });
  }
  return text;
}
