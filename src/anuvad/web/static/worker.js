// The Web Worker behind anuvad.load() in a page: it loads the export and translates, one call
// at a time, stopping a call between two decoding steps when the page aborts it.
import { loadHere } from "./anuvad.js";

let translator = null;
const running = new Map();

self.onmessage = async (event) => {
  const { id, type } = event.data;
  if (type === "abort") {
    const controller = running.get(event.data.target);
    if (controller) controller.abort();
    return;
  }
  try {
    if (type === "load") {
      translator = await loadHere(event.data.base, { cache: event.data.cache, headers: event.data.headers });
      self.postMessage({ id, result: { settings: translator.settings, warnings: translator.warnings } });
    } else if (type === "translate") {
      const controller = new AbortController();
      running.set(id, controller);
      try {
        const result = await translator.translate(event.data.texts, { ...event.data.options, signal: controller.signal });
        self.postMessage({ id, result });
      } finally {
        running.delete(id);
      }
    }
  } catch (error) {
    self.postMessage({ id, error: { name: error.name, message: error.message } });
  }
};
