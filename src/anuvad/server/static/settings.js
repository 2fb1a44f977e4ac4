// The reader's choices, remembered across reloads in this browser (localStorage): the direction
// (model id), the search (decoding, beam size, n-best), the Terms and translate-as-you-type.
// Storage may be off (private windows, policies): the page then simply forgets.

const KEY = "anuvad-settings";

export function remembered() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "{}");
    return saved && typeof saved === "object" ? saved : {};
  } catch {
    return {};
  }
}

export function remember(values) {
  try {
    localStorage.setItem(KEY, JSON.stringify({ ...remembered(), ...values }));
  } catch {
    // storage full or refused: nothing to remember with
  }
}
