// The text box's contents and the translation's way out: the character count, a .txt or .html
// document opened into the box, and Copy and Download of the translation.

import { authHeaders } from "./api.js";
import { $, charCount } from "./dom.js";
import { clearOutput, setStatus, showError } from "./output.js";
import { currentModel, modelById, state } from "./state.js";
import { translate } from "./translate.js";

export function updateCount() {
  const length = charCount($("source").value);
  $("char-count").textContent = String(length);
  $("char-count").parentElement.classList.toggle("over", length > state.limits.max_text_chars);
}

export async function copyTranslation() {
  const text = state.result && state.result.text;
  if (!text) return;
  let copied = true;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    copied = copyBySelection(text);
  }
  const button = $("copy-button");
  // A stopped or broken-off translation is copied as far as it came, and said so.
  const part = copied && !state.result.complete;
  button.textContent = copied ? (part ? "Copied part ✓" : "Copied ✓") : "Copy failed";
  $("copy-status").textContent = !copied
    ? "The browser refused to copy; select the text instead."
    : part ? "Copied what was translated; the rest of the text was not." : "Translation copied.";

  setTimeout(() => { button.textContent = "Copy"; }, 2000);
}

// Where the asynchronous clipboard is refused (an older browser, a page not on localhost or HTTPS).
function copyBySelection(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "visually-hidden";
  document.body.append(area);
  area.select();
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } catch {
    copied = false;
  }
  area.remove();
  return copied;
}

// The translation as a file in the format it came in: "report.html" → "report.hi.html".
export function downloadTranslation() {
  const result = state.result;
  if (!result || !result.text) return;
  const lang = modelById(result.model) ? modelById(result.model).tgt_lang : "translation";
  const html = result.format === "html";
  const name = result.file
    ? result.file.name.replace(/(\.[^.]+)?$/, (ext) => `.${lang}${ext || (html ? ".html" : ".txt")}`)
    : `translation.${lang}.${html ? "html" : "txt"}`;
  const blob = new Blob([result.text], { type: html ? "text/html;charset=utf-8" : "text/plain;charset=utf-8" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

const FORMATS = { txt: "text", text: "text", html: "html", htm: "html" };
// Documents the server translates whole (LibreTranslate's translate_file) and sends back.
const OFFICE = {
  docx: "a Word document",
  pptx: "a PowerPoint presentation",
  xlsx: "an Excel workbook",
  odt: "an OpenDocument text",
  odp: "an OpenDocument presentation",
  epub: "an EPUB book",
  srt: "SubRip subtitles",
  vtt: "WebVTT subtitles",
};

// A .txt or .html document: its text goes into the box and is translated; Download gives the
// translation back in the same format (HTML with its markup as it was). An office document or
// e-book goes to the server whole and comes back translated, as a download.
export async function openDocument(file) {
  const extension = (file.name.match(/\.([^.]+)$/) || ["", ""])[1].toLowerCase();
  const format = FORMATS[extension];
  $("file-input").value = ""; // the same file can be opened again
  if (OFFICE[extension]) {
    await translateFile(file, OFFICE[extension]);
    return;
  }
  if (!format) {
    showError(`${file.name}: the page translates .txt, .html, .${Object.keys(OFFICE).join(", .")} documents`);
    return;
  }
  $("source").value = await file.text();
  updateCount();
  setDocument({ name: file.name, format });
  clearOutput();
  await translate();
}

export function setDocument(file) {
  state.file = file;
  $("file-note").hidden = !file;
  if (!file) return;
  $("file-note-text").textContent = file.format === "html"
    ? `${file.name}: HTML; only the text between the tags is translated, the markup comes back as it was.`
    : `${file.name}: plain text.`;
  $("file-forget").hidden = file.format !== "html";
}

// An office document translated on the server paragraph by paragraph (everything else in it
// kept), then saved under the translated name ("report.docx" → "report.hi.docx").
async function translateFile(file, kind) {
  const model = currentModel();
  clearOutput();
  showError("");
  const limit = state.limits.max_file_bytes;
  if (limit && file.size > limit) {
    showError(`${file.name}: ${file.size} bytes; the server takes documents of at most ${limit} bytes (split it, or save its images smaller)`);
    return;
  }
  state.file = null;
  $("file-forget").hidden = true;
  $("file-note").hidden = false;
  $("file-note-text").textContent = `${file.name}: ${kind}; its paragraphs are translated on the server and the file comes back as a download.`;
  setStatus(`Translating ${file.name}…`);
  const form = new FormData();
  form.append("file", file);
  form.append("source", model.src_lang);
  form.append("target", model.tgt_lang);
  try {
    const answer = await fetch("/libretranslate/translate_file", { method: "POST", body: form, headers: authHeaders() });
    const data = await answer.json().catch(() => ({}));
    if (!answer.ok) throw new Error(`${answer.status}: ${data.error || answer.statusText}`);
    // the path only: behind a proxy the URL the server made may say http:// on an https:// page
    const translated = await fetch(new URL(data.translatedFileUrl, location.href).pathname);
    if (!translated.ok) throw new Error(`${translated.status}: the translation could not be fetched; open the file again`);
    const name = decodeURIComponent(data.translatedFileUrl.split("/").pop()).replace(/^[^.]*\./, "");
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await translated.blob());
    link.download = name;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
    setStatus(`Translated ${file.name}: saved as ${name}`);
  } catch (err) {
    setStatus("");
    showError(err.message.includes(file.name) ? err.message : `${file.name}: ${err.message}`);
  }
}
