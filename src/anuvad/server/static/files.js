// The text box's contents and the translation's way out: the character count, a .txt or .html
// document opened into the box, and Copy and Download of the translation.

import { $, charCount } from "./dom.js";
import { clearOutput, showError } from "./output.js";
import { modelById, state } from "./state.js";
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
  button.textContent = copied ? "Copied ✓" : "Copy failed";
  $("copy-status").textContent = copied ? "Translation copied." : "The browser refused to copy; select the text instead.";
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

// A .txt or .html document: its text goes into the box and is translated; Download gives the
// translation back in the same format (HTML with its markup as it was).
export async function openDocument(file) {
  const extension = (file.name.match(/\.([^.]+)$/) || ["", ""])[1].toLowerCase();
  const format = FORMATS[extension];
  $("file-input").value = ""; // the same file can be opened again
  if (!format) {
    showError(`${file.name}: the page translates .txt and .html documents`);
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
