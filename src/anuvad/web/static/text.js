// The text side of the torch engine's frontend (src/anuvad/inference/frontend.py): a source
// sentence is normalised as the training data was (the rules come from model.json, generated
// from the Python normaliser), recased when shouted or in title case
// (src/anuvad/inference/casing.py), then split by SentencePiece.

/** The normaliser model.json describes: a function text -> text. */
export function normalizer(spec) {
  if (spec.kind === "strip") {
    const ends = pythonSpaceEnds(spec.space_ranges);
    return (text) => text.replace(ends, "");
  }
  if (spec.kind === "indic") return indicNormalizer(spec);
  const rules = spec.rules.map(([pattern, replacement]) => [new RegExp(pattern, "gu"), replacement]);
  return (text) => {
    let t = text.normalize("NFC");
    for (const [pattern, replacement] of rules) t = t.replace(pattern, replacement);
    if (spec.remove_control_chars) t = t.replace(/\p{C}/gu, "");
    t = t.trim();
    return t.normalize("NFC").replace(/\s+/gu, " ").trim();
  };
}

// The Indic NLP library's normaliser (src/anuvad/web/indic_rules.py, whose `apply` is this
// function in Python): NFC, the character map, the context rules, NFC, Python's whitespace
// (not JavaScript's \s) collapsed and trimmed.
function indicNormalizer(spec) {
  const map = new Map(Object.entries(spec.char_map));
  const rules = spec.rules.map(([pattern, replacement]) => [new RegExp(pattern, "gu"), replacement]);
  const runs = new RegExp(`[${spaceClass(spec.space_ranges)}]+`, "gu");
  const ends = pythonSpaceEnds(spec.space_ranges);
  return (text) => {
    let t = "";
    for (const c of text.normalize("NFC")) t += map.get(c) ?? c;
    for (const [pattern, replacement] of rules) t = t.replace(pattern, replacement);
    return t.normalize("NFC").replace(runs, " ").replace(ends, "");
  };
}

// The characters of [first, last] code point ranges as the inside of a character class.
function spaceClass(ranges) {
  const hex = (code) => `\\u{${code.toString(16)}}`;
  return ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join("");
}

// Leading and trailing runs of Python's whitespace (model.json's space_ranges: what str.strip
// removes), for String.replace with "".
function pythonSpaceEnds(ranges) {
  const space = spaceClass(ranges);
  return new RegExp(`^[${space}]+|[${space}]+$`, "gu");
}

// A run of letters (Python's [^\W\d_]: letters and the numerals that are not decimal digits).
const WORD = /[\p{L}\p{Nl}\p{No}]+/gu;

const isUpper = (c) => c === c.toUpperCase() && c !== c.toLowerCase();
const cased = (w) => w.toLowerCase() !== w.toUpperCase();
const capitalize = (w) => {
  const [first, ...rest] = [...w];
  return first.toUpperCase() + rest.join("").toLowerCase();
};

/** Whether text is shouted or title case (casing.needs_recasing). */
export function needsRecasing(text, spec) {
  const words = (text.match(WORD) || []).filter((w) => [...w].length >= 2 && cased(w));
  if (words.length < spec.min_words) return false;
  const letters = [...words.join("")];
  const capitals = letters.filter(isUpper).length;
  if (capitals >= spec.shouted_share * letters.length) return true;
  const capitalised = words.filter((w) => isUpper([...w][0])).length;
  return words.length > spec.min_words && capitalised >= spec.title_share * words.length;
}

// casing._BASE_LETTERS: Latin letters Unicode does not decompose, as the letters they are
// written as.
const BASE_LETTERS = Object.fromEntries(
  [..."ŁłØøĐđıÆæŒœßÞþÐð"].map((c, i) =>
    [c, ["L", "l", "O", "o", "D", "d", "i", "AE", "ae", "OE", "oe", "ss", "Th", "th", "D", "d"][i]]),
);

/** casing.fold_unreadable: each letter the tokenizer cannot read as its base letter where it
 * reads that ("Škoda" → "Skoda"): the compatibility decomposition without combining marks. */
export function foldUnreadable(text, encode, unkId) {
  if (/^[\x00-\x7f]*$/u.test(text) || !encode(text).includes(unkId)) return text;
  let out = "";
  for (const c of text) {
    if (c.codePointAt(0) < 128 || !/^\p{L}$/u.test(c) || !encode(c).includes(unkId)) {
      out += c;
      continue;
    }
    const base = BASE_LETTERS[c] || c.normalize("NFKD").replace(/\p{M}/gu, "");
    out += base && base !== c && !encode(base).includes(unkId) ? base : c;
  }
  return out;
}

/** Every word in the casing the source vocabulary knows best (casing.recase). */
export function recase(text, encode, spec, unkId) {
  if (!needsRecasing(text, spec)) return text;
  WORD.lastIndex = 0;
  const first = WORD.exec(text);
  const start = first ? first.index : -1;
  const cost = (word) => {
    const ids = encode(word);
    return ids.length + (spec.unknown_cost - 1) * ids.filter((i) => i === unkId).length;
  };
  return text.replace(WORD, (word, offset) => {
    const options = offset === start ? [capitalize(word), word] : [word.toLowerCase(), capitalize(word), word];
    let best = null;
    let bestCost = Infinity;
    for (const option of new Set(options)) {
      const c = cost(option);
      if (c < bestCost) { best = option; bestCost = c; }
    }
    return best;
  });
}
