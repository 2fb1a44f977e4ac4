// Small helpers the page's modules share: element lookup, drop-down lists, counting as the
// server counts.

export const $ = (id) => document.getElementById(id);

export function fillSelect(select, values, selected, label) {
  select.replaceChildren();
  for (const value of values) {
    const option = document.createElement("option");
    option.value = String(value);
    option.textContent = label ? label(value) : String(value);
    if (String(value) === String(selected)) option.selected = true;
    select.append(option);
  }
}

export function range(from, to) {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

// Lengths as the server counts them: code points (an emoji is one character, two UTF-16 units).
export const charCount = (text) => Array.from(text).length;

// The server's offsets count code points (Python); JavaScript strings index UTF-16 units, which
// differ after any character outside the Basic Multilingual Plane (e.g. an emoji).
export function codeUnitIndex(text) {
  const offsets = [0];
  for (const ch of text) offsets.push(offsets[offsets.length - 1] + ch.length);
  return (i) => offsets[Math.max(0, Math.min(i, offsets.length - 1))];
}

const LANGUAGES = { en: "English", hi: "Hindi", de: "German", fr: "French" };
export const languageName = (code) => LANGUAGES[code] || code;

// 0.0055 reads "<1%", not "0%": the page never claims certainty the model does not give.
export const percent = (p) => (p < 0.01 ? "<1%" : p > 0.99 ? ">99%" : `${Math.round(p * 100)}%`);

export function truncate(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
