// Hindi numbers written in words, read as digits before the search, as the server reads them
// (number_words.read_number_words: "ढाई सौ" → "250", "डेढ़ लाख" → "1.5 लाख", "साढ़े तीन बजे" →
// "3:30 बजे"). The words and their values are model.json's `text.numbers.number_words`,
// generated from src/anuvad/inference/number_words.py; the code follows read_number_words line
// by line, with every value counted in quarters (each one is a whole number of quarters: ¼, ½,
// 1½, 2½), so that the arithmetic is exact.

const PRECOMPOSED = "कखगजडढफय"; // U+0958 … U+095F without their nukta

/** word with its nukta dropped and chandrabindu as anusvara (number_words._key). */
function key(word) {
  let out = "";
  for (const c of word) {
    const code = c.codePointAt(0);
    out += code >= 0x958 && code <= 0x95f ? PRECOMPOSED[code - 0x958] : c;
  }
  return out.replaceAll("\u093c", "").replaceAll("ँ", "ं");
}

/** The number the words begin with: [value in quarters, how many words, whether it is spelled
 * with a multiplier or fraction, its largest multiplier from हज़ार on or 0] (number_words._parse;
 * counts, wholes and shifts in quarters, multipliers as they are). */
function parse(words) {
  let total = 0, group = null, hundreds = false, tail = false, last = 0, largest = 0, n = 0, spelled = false;
  while (n < words.length) {
    const [kind, value] = words[n];
    if (group === null) {
      if (kind === "count" || kind === "whole") {
        group = value;
        n += 1;
        spelled = spelled || kind === "whole";
        continue;
      }
      const following = n + 1 < words.length ? words[n + 1][0] : null;
      if (kind === "shift" && following === "count") {
        const base = words[n + 1][1];
        if (value < 0 && base < 8) break; // "पौने एक"
        group = base + value;
        n += 2;
        spelled = true;
        continue;
      }
      if (kind === "shift" && value > 0 && (following === "hundred" || following === "large")) {
        group = 4 + value; // "सवा सौ": 1¼ hundred
        n += 1;
        spelled = true;
        continue;
      }
      if (kind === "large" && largest === 1000 && value === 1e7) {
        total *= value; // "दो हज़ार करोड़"
        largest = last = value;
        n += 1;
        continue;
      }
      break;
    }
    if (kind === "hundred" && !hundreds && group < 400) {
      group *= 100;
      hundreds = true;
      n += 1;
      spelled = true;
      continue;
    }
    if (kind === "count" && hundreds && !tail && value < 400) {
      group += value;
      tail = true;
      n += 1;
      continue;
    }
    if (kind === "large" && (!largest || value < last) && group < 4 * value) {
      total += group * value;
      group = null;
      hundreds = tail = false;
      last = value;
      largest = largest || value;
      n += 1;
      spelled = true;
      continue;
    }
    break;
  }
  if (total && group !== null && group % 4 !== 0) return [0, 0, false, 0]; // "दो हज़ार डेढ़"
  return [total + (group ?? 0), n, spelled, largest];
}

/** value in digits: Indian grouping from 1,00,000, "25,000" below, a decimal for a fraction
 * (number_words._digits). */
function digits(value) {
  if (!Number.isInteger(value)) return value.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
  const whole = String(value);
  if (whole.length <= 4) return whole;
  const head = whole.slice(0, -3);
  const pairs = [];
  for (let i = head.length; i > 0; i -= 2) pairs.unshift(head.slice(Math.max(0, i - 2), i));
  return [...pairs, whole.slice(-3)].join(",");
}

/** How a number of q quarters is written for the model and whether its last word stays after
 * it ("डेढ़ लाख": "1.5", "लाख" kept), or null to leave its words (number_words._written). */
function written(q, largest, names, clock, rules) {
  if (clock) {
    const hours = Math.floor((q * 15) / 60), minutes = (q * 15) % 60;
    if (hours < 1 || hours > 24 || (!minutes && clock === "बजे")) return null; // "दस बजे" is "ten o'clock"
    return [minutes ? `${hours}:${String(minutes).padStart(2, "0")}` : String(hours), false];
  }
  if (largest >= rules.kept_word && (q * 25) % largest === 0) {
    if (rules.large[key(names[names.length - 1])] === largest) return [digits(q / 4 / largest), true];
    const word = names.find((w) => rules.large[key(w)] === largest);
    return [`${digits(q / 4 / largest)} ${word}`, false]; // "1.1 करोड़"
  }
  return [digits(q / 4), false];
}

/** Whether text.slice(start, end) is half of a range or beside digits ("दो-तीन सौ", "बीस—पच्चीस",
 * "दो/तीन", "2 पच्चीस"), or overlaps a protected [start, end] span (number_words._beside_other). */
function besideOther(text, start, end, rules, protectedSpans) {
  const joined = [text[start - 1], text[end]].some((c) => c !== undefined && rules.joiners.includes(c));
  const digits = /\p{Nd}[ \u00a0]*$/u.test(text.slice(0, start)) || /^[ \u00a0]*\p{Nd}/u.test(text.slice(end));
  return joined || digits || protectedSpans.some(([a, b]) => a < end && start < b);
}

/** text with each Hindi number in words as digits (number_words.read_number_words), but where a
 * number overlaps a protected [start, end] span; as it is for other languages. */
export function readNumberWords(text, rules, protectedSpans = []) {
  const w = rules.numbers.number_words;
  if (!w) return text;
  const found = [...text.matchAll(new RegExp(w.word, "gu"))].map((m) => [m.index, m.index + m[0].length, w.words[key(m[0])] ?? null]);
  const gapAll = new RegExp(`^(?:${w.gap})$`, "u");
  const gapAt = new RegExp(w.gap, "uy");
  const wordAt = new RegExp(w.word, "uy");
  let out = "", position = 0, i = 0;
  while (i < found.length) {
    let run = i; // the words of one number: known words with only spaces between them
    while (run + 1 < found.length && found[run + 1][2] && found[run][2]) {
      if (!gapAll.test(text.slice(found[run][1], found[run + 1][0]))) break;
      run += 1;
    }
    if (found[i][2] === null) {
      i += 1;
      continue;
    }
    const words = found.slice(i, run + 1).map((f) => f[2]);
    const [q, n, spelled, largest] = parse(words);
    const start = found[i][0];
    let end = n ? found[i + n - 1][1] : found[i][1];
    if (n < words.length || !n || besideOther(text, start, end, w, protectedSpans)) {
      i = run + 1; // two numbers in a row ("दो तीन सौ"), or no number: left as words
      continue;
    }
    gapAt.lastIndex = end;
    const gap = gapAt.exec(text);
    let clock = "";
    if (gap) {
      wordAt.lastIndex = gap.index + gap[0].length;
      const following = wordAt.exec(text);
      if (following !== null && w.clock.includes(following[0])) clock = following[0];
    }
    const big = spelled || (q > 40 && q % 40 !== 0); // the tens alone are known words
    const names = found.slice(i, i + n).map(([a, b]) => text.slice(a, b));
    const result = big || clock ? written(q, largest, names, clock, w) : null;
    if (result !== null) {
      const [replacement, wordKept] = result;
      if (wordKept) end = found[i + n - 2][1]; // "डेढ़ लाख": "डेढ़" read as "1.5"
      out += text.slice(position, start) + replacement;
      position = end;
    }
    i = run + 1;
  }
  return out + text.slice(position);
}
