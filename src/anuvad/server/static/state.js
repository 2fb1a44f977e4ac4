// The page's state, shared by its modules, and what it knows of the served models (GET /models).

import { languageName } from "./dom.js";

export const state = {
  limits: { max_text_chars: 20000, max_sentence_chars: 600, max_texts: 64, max_beam_size: 16 },
  models: [], // GET /models: every served model, the default first
  modelId: null, // the model the page translates with
  result: null, // what the translation pane shows: { model, text, format, file, complete }
  request: null, // the settings of the shown translation (its attention view is asked with them)
  sources: [], // the source sentences of the shown translation
  attentionSeq: 0, // each /attention request's number: only the newest answer is drawn
  attentionOf: null, // the result whose attention the card shows
  busy: false,
  editedDuringRun: false, // the text was edited while a translation ran
  controller: null, // aborts the translation in flight (Stop, Escape, a newer keystroke)
  nbestWanted: 4, // the n-best the reader chose (kept while greedy search hides it)
  file: null, // the document opened: { name, format: "text" | "html" }
  autoTimer: 0,
  detectTimer: 0,
  detectSeq: 0, // each /detect request's number: only the newest answer counts
};

export const modelById = (id) => state.models.find((m) => m.id === id);

export const currentModel = () => modelById(state.modelId);

// A model named in words: the server's title ("English → Hindi, general text"), else its
// languages and file name.
export function modelTitle(model) {
  return model.title || `${languageName(model.src_lang)} → ${languageName(model.tgt_lang)} (${model.name})`;
}

// The served model translating the other way, if any.
export function reverseOf(model) {
  return state.models.find((m) => m.src_lang === model.tgt_lang && m.tgt_lang === model.src_lang);
}
