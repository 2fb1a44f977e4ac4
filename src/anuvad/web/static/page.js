// The export's own page (index.html): load the translator from this folder, translate the text
// box's text as the server's page does (sentences, numbers, danda and quotes: document.js).
import { AbortError, load } from "./anuvad.js";

const $ = (id) => document.getElementById(id);
let translator = null;
let controller = null;

function status(text) {
  $("status").textContent = text;
}

async function start() {
  const started = performance.now();
  status("Loading the model…");
  try {
    translator = await load(".");
  } catch (error) {
    status("");
    $("error").textContent = error.message;
    return;
  }
  const s = translator.settings;
  $("direction").textContent = `${s.languages.source} → ${s.languages.target} (${s.dtype})`;
  $("target").lang = s.languages.target;
  $("source").lang = s.languages.source;
  $("error").textContent = translator.warnings.join(" ");
  status(`Ready (loaded in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
  $("translate").disabled = false;
  window.anuvadTranslator = translator; // for the tests and the console
}

async function translate() {
  if (!translator) return;
  controller = new AbortController();
  $("translate").disabled = true;
  $("stop").hidden = false;
  $("error").textContent = "";
  status("Translating…");
  const started = performance.now();
  try {
    const result = await translator.translateText($("source").value, {
      beam_size: Number($("beam").value),
      signal: controller.signal,
    });
    $("target").textContent = result.text;
    status(`${result.sentences.length} sentences in ${((performance.now() - started) / 1000).toFixed(2)} s`);
  } catch (error) {
    status(error instanceof AbortError ? "Stopped" : "");
    if (!(error instanceof AbortError)) $("error").textContent = error.message;
  } finally {
    $("translate").disabled = false;
    $("stop").hidden = true;
    controller = null;
  }
}

$("translate").addEventListener("click", translate);
$("stop").addEventListener("click", () => controller && controller.abort());
$("source").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) translate();
});
start();
