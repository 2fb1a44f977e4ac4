// anuvad in the browser: `const t = await load("en-hi")` then
// `await t.translate(["text", ...], { beam_size: 4, nbest: 1, signal })`.
// The model is the export's encoder.onnx and decoder.onnx (one decoder step with its key/value
// cache) run by onnxruntime-web; the search (search.js) and the text side (text.js) follow the
// torch engine's rules, so that the tokens are the torch engine's. In a page, load() runs the
// translator in a Web Worker (worker.js) so that the page stays responsive.

import { AbortError, beamSearch, greedySearch, outputLimit } from "./search.js";
import { foldUnreadable, normalizer, recase } from "./text.js";
import { assemble, hideAddresses, mend, readAmounts, readOrdinals, revealAlone, splitDocument } from "./document.js";
import { readNumberWords } from "./numbers.js";

export { AbortError };

/** Thrown by load() where the browser cannot run the model (onnxruntime-web's WASM build
 * needs WebAssembly SIMD). */
export class UnsupportedBrowserError extends Error {
  constructor(message) {
    super(message);
    this.name = "UnsupportedBrowserError";
  }
}

// The smallest module using a SIMD instruction (v128.const; i8x16.popcnt; drop), as
// wasm-feature-detect checks it: WebAssembly.validate is false where SIMD is missing.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

/** Why this browser cannot run the export (null: it can). */
export function browserProblem() {
  if (typeof WebAssembly !== "object") return "this browser has no WebAssembly";
  if (!WebAssembly.validate(SIMD_PROBE)) {
    return "this browser lacks WebAssembly SIMD, which the offline translator needs (Chrome/Edge 91+, Firefox 89+, Safari 16.4+)";
  }
  if (typeof DecompressionStream === "undefined") {
    return "this browser lacks DecompressionStream, which unpacks the model files (Chrome/Edge 80+, Firefox 113+, Safari 16.4+)";
  }
  return null;
}

const IS_NODE = typeof process !== "undefined" && !!(process.versions && process.versions.node);

function resolve(base, name) {
  const folder = base.endsWith("/") ? base : `${base}/`;
  if (IS_NODE && !/^[a-z]+:\/\//i.test(folder)) return folder + name;
  return new URL(name, new URL(folder, globalThis.location ? globalThis.location.href : import.meta.url)).href;
}

/** `bytes` unpacked when they are gzip data (the export stores its large files as `.gz`; a
 * host that already sent them with Content-Encoding: gzip gives the unpacked bytes). */
async function gunzip(bytes) {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  if (IS_NODE) {
    const { gunzipSync } = await import("node:zlib");
    return new Uint8Array(gunzipSync(bytes));
  }
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** `headers` (an object, a Headers or pairs) as a plain object: what a worker can be sent. */
const plainHeaders = (headers) => Object.fromEntries(new Headers(headers || {}));

/** The bytes at `location` (fetched with `headers`), unpacked (gunzip); with `store` ({cache: a Cache Storage name, warnings: []}) read
 * from and kept in that cache, so that the model is downloaded once. A full disk does not stop
 * the translation: it leaves a warning and the file is downloaded again next time. */
async function readBytes(location, store = null, headers = {}) {
  if (IS_NODE && !/^[a-z]+:\/\//i.test(location)) {
    const { readFile } = await import("node:fs/promises");
    return gunzip(new Uint8Array(await readFile(location)));
  }
  const cache = store && store.cache && typeof caches !== "undefined" ? await caches.open(store.cache) : null;
  const kept = cache ? await cache.match(location) : undefined;
  if (kept) return gunzip(new Uint8Array(await kept.arrayBuffer()));
  const response = await fetch(location, { headers });
  if (!response.ok) throw new Error(`${location}: HTTP ${response.status}`);
  if (cache) {
    try {
      await cache.put(location, response.clone());
    } catch (error) {
      const full = error && (error.name === "QuotaExceededError" || /quota/i.test(String(error.message)));
      store.warnings.push(
        full
          ? `Not enough storage in this browser to keep the model (${location.split("/").pop()}): it works now but will be downloaded again next time. Free some space or allow this site more storage.`
          : `The model could not be kept in this browser's storage (${error.message}); it will be downloaded again next time.`,
      );
    }
  }
  return gunzip(new Uint8Array(await response.arrayBuffer()));
}

/** The ES module whose (unpacked) source is `bytes`: from a blob: URL in a browser, a data:
 * URL under Node (whose loader takes no blob: URLs). */
async function importSource(bytes) {
  if (IS_NODE) return import(`data:text/javascript;base64,${Buffer.from(bytes).toString("base64")}`);
  const url = URL.createObjectURL(new Blob([bytes], { type: "text/javascript" }));
  try {
    return await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

async function sentencePiece(module, bytes) {
  const { SentencePieceProcessor } = module;
  const processor = new SentencePieceProcessor();
  await processor._loadModel(bytes); // the bytes of a .model file (its URL loader needs fs)
  return processor;
}

/** The vendored onnxruntime-web, given the WASM binary the export stores packed (read, and
 * cached, as the model is: ort itself would fetch an unpacked file by name). */
async function defaultOrt(wasmBinary) {
  const ort = await import("./vendor/onnxruntime-web/ort.wasm.min.mjs");
  ort.env.wasm.wasmPaths = new URL("./vendor/onnxruntime-web/", import.meta.url).href;
  if (wasmBinary) ort.env.wasm.wasmBinary = wasmBinary;
  return ort;
}

/** Rows of a (rows, ...) float or byte array kept/duplicated: row i becomes old row rows[i]. */
function gatherRows(data, rowSize, rows) {
  const out = new data.constructor(rows.length * rowSize);
  rows.forEach((r, i) => out.set(data.subarray(r * rowSize, (r + 1) * rowSize), i * rowSize));
  return out;
}

/** decoder.onnx for N rows, its cache kept here: self_kv (N, 2L, H, t, Dh), cross_kv
 * (N, 2L, H, S, Dh) and src_pad_mask (N, S), each row one block. */
class StepDecoder {
  constructor(ort, session, shapes, crossKv, mask, batch, srcLen, group) {
    this.ort = ort;
    this.session = session;
    this.slices = 2 * shapes.decoder_layers;
    this.heads = shapes.heads;
    this.headSize = shapes.head_size;
    this.srcLen = srcLen;
    const expand = [...Array(batch * group).keys()].map((i) => Math.floor(i / group));
    this.crossRow = this.slices * this.heads * srcLen * this.headSize;
    this.crossKv = gatherRows(crossKv, this.crossRow, expand);
    this.mask = gatherRows(mask, srcLen, expand);
    this.rowSentence = expand; // the sentence each row decodes: its cross_kv and mask rows
    this.rows = expand.length;
    this.t = 0;
    this.selfKv = new Float32Array(0);
  }

  async step(lastTokens) {
    const { ort, rows, slices, heads, headSize } = this;
    const feeds = {
      tgt_ids: new ort.Tensor("int64", BigInt64Array.from(lastTokens, (v) => BigInt(v)), [rows, 1]),
      self_kv: new ort.Tensor("float32", this.selfKv, [rows, slices, heads, this.t, headSize]),
      cross_kv: new ort.Tensor("float32", this.crossKv, [rows, slices, heads, this.srcLen, headSize]),
      src_pad_mask: new ort.Tensor("bool", this.mask, [rows, this.srcLen]),
    };
    const out = await this.session.run(feeds);
    this.selfKv = out.new_self_kv.data;
    this.t += 1;
    return out.log_probs.data;
  }

  // Copies are most of a step's own time: a row that stays in place is not copied, and
  // cross_kv and the mask, the same for every row of a sentence, only when the rows' sentences
  // change (a beam reorder within each sentence leaves them as they are).
  keep(rowIndex) {
    const identity = rowIndex.length === this.rows && rowIndex.every((r, i) => r === i);
    if (identity) return;
    const selfRow = this.slices * this.heads * this.t * this.headSize;
    this.selfKv = gatherRows(this.selfKv, selfRow, rowIndex);
    const sentences = rowIndex.map((r) => this.rowSentence[r]);
    const same = sentences.length === this.rowSentence.length && sentences.every((b, i) => b === this.rowSentence[i]);
    if (!same) {
      this.crossKv = gatherRows(this.crossKv, this.crossRow, rowIndex);
      this.mask = gatherRows(this.mask, this.srcLen, rowIndex);
    }
    this.rowSentence = sentences;
    this.rows = rowIndex.length;
  }
}

/** A loaded export, translating in this thread. */
export class Translator {
  constructor(settings, ort, encoder, decoder, sourceSpm, targetSpm) {
    this.settings = settings;
    this.ort = ort;
    this.encoder = encoder;
    this.decoder = decoder;
    this.sourceSpm = sourceSpm;
    this.targetSpm = targetSpm;
    this.normalize = normalizer(settings.normalization);
    this.mayRun = new Set(settings.may_run);
    this.direction = settings.direction;
  }

  /** A whole text (paragraphs, several sentences) translated as the server does it: cut into
   * sentences that keep their place, each translated, mended (danda, quotes, the source's
   * numbers) and put back. Returns {text, sentences: [{source, text, start, end, ...}]}. */
  async translateText(text, options = {}) {
    return translateText(this, text, options);
  }

  /** Source ids per text as the torch engine makes them (normalised, recased, split, cut). */
  encode(texts) {
    const ids = this.settings.special_ids;
    const encode = (t) => this.sourceSpm.encodeIds(t);
    return texts.map((text) => {
      const readable = foldUnreadable(this.normalize(text), encode, ids.unk);
      const prepared = recase(readable, encode, this.settings.recase, ids.unk);
      return encode(prepared).slice(0, this.settings.max_src_tokens);
    });
  }

  /** Translate texts (results in input order): {text, token_ids, score, finished,
   * candidates: n-best [{text, token_ids, score, finished}]}. Options: beam_size, nbest,
   * length_penalty, no_repeat_ngram_size, ... (model.json's search settings), signal (an
   * AbortSignal: stops between two decoding steps with an AbortError). */
  async translate(texts, options = {}) {
    const { signal, ...changes } = options;
    const search = { ...this.settings.search };
    for (const [key, value] of Object.entries(changes)) {
      if (value === undefined || value === null) continue;
      if (!(key in search)) throw new Error(`unknown search setting ${key}`);
      search[key] = value;
    }
    if (!(search.beam_size >= 1) || !(search.nbest >= 1) || search.nbest > search.beam_size) {
      throw new Error(`need 1 <= nbest <= beam_size, got nbest ${search.nbest}, beam_size ${search.beam_size}`);
    }
    const wide = { ...search, nbest: search.nbest > 1 ? search.beam_size : 1 };
    const encoded = this.encode(texts);
    const results = texts.map(() => null);
    const todo = [...texts.keys()].filter((i) => encoded[i].length > 0);
    for (const i of texts.keys()) {
      if (encoded[i].length === 0) {
        const empty = { text: "", token_ids: [], score: 0, finished: true };
        results[i] = { ...empty, source: texts[i], candidates: [empty] };
      }
    }
    const order = [...todo].sort((a, b) => encoded[a].length - encoded[b].length);
    for (let start = 0; start < order.length; start += search.batch_size) {
      if (signal && signal.aborted) throw new AbortError();
      const indices = order.slice(start, start + search.batch_size);
      const found = await this.searchBatch(indices.map((i) => encoded[i]), wide, signal);
      indices.forEach((index, n) => {
        const seen = new Set();
        const candidates = [];
        for (const h of found[n]) {
          const text = this.targetSpm.decodeIds(h.token_ids);
          if (seen.has(text)) continue;
          seen.add(text);
          candidates.push({ text, token_ids: h.token_ids, score: h.score, finished: h.finished });
        }
        if (candidates.length === 0) candidates.push({ text: "", token_ids: [], score: -Infinity, finished: false });
        const best = candidates[0];
        results[index] = { source: texts[index], ...best, candidates: candidates.slice(0, search.nbest) };
      });
    }
    return results;
  }

  async searchBatch(sources, search, signal) {
    const { ort, settings } = this;
    const ids = settings.special_ids;
    const batch = sources.length;
    const srcLen = Math.max(...sources.map((s) => s.length)) + 1; // + EOS
    const srcIds = new BigInt64Array(batch * srcLen).fill(BigInt(ids.pad));
    const mask = new Uint8Array(batch * srcLen).fill(1);
    sources.forEach((s, b) => {
      [...s, ids.eos].forEach((token, j) => {
        srcIds[b * srcLen + j] = BigInt(token);
        mask[b * srcLen + j] = 0;
      });
    });
    const encoded = await this.encoder.run({
      src_ids: new ort.Tensor("int64", srcIds, [batch, srcLen]),
      src_pad_mask: new ort.Tensor("bool", mask, [batch, srcLen]),
    });
    const limits = sources.map((s) => outputLimit(s.length + 1, search, settings.shapes.max_positions));
    const group = search.beam_size;
    const decoder = new StepDecoder(ort, this.decoder, settings.shapes, encoded.cross_kv.data, mask, batch, srcLen, group);
    const ctx = { vocab: settings.shapes.tgt_vocab_size, ids, search, mayRun: this.mayRun, signal };
    return group === 1 ? greedySearch(decoder, limits, ctx) : beamSearch(decoder, limits, ctx);
  }
}

async function translateText(translator, text, options) {
  const rules = translator.settings.text;
  const segments = splitDocument(text, rules.split);
  // Read as the server reads them: Hindi number words ("ढाई सौ" as "250", numbers put back from
  // this reading), amounts and ordinals ("USD 25" as "$25", "₹500" as "Rs 500", "2nd" as "second").
  const numbered = segments.map((s) => readNumberWords(s.text, rules));
  const read = numbered.map((t) => readOrdinals(readAmounts(t, rules), rules));
  const found = await translator.translate(read, options);
  found.forEach((r, i) => {
    r.source = segments[i].text;
  });
  // The model reads addresses as written here (as the server's CTranslate2 engine: a search that
  // cannot require a placeholder wrote it as a Hindi word); a sentence of addresses alone comes
  // back as written (placeholders.reveal).
  found.forEach((r, i) => {
    const hidden = hideAddresses(segments[i].text, rules, () => true);
    if (!hidden.only_addresses) return;
    r.text = revealAlone(hidden);
    for (const c of r.candidates) c.text = r.text;
  });
  const mended = found.map((r, i) => mend(r.text, numbered[i], rules));
  return {
    text: assemble(text, segments, mended),
    // start, end: the sentence's place in `text` (UTF-16 code units, as String.slice counts).
    sentences: found.map((r, i) => ({ ...r, raw_text: r.text, text: mended[i], start: segments[i].start, end: segments[i].end })),
  };
}

/** Load the export at `base` (a folder URL, or a path under Node) in this thread. Options: ort
 * (an onnxruntime module, e.g. onnxruntime-node; default the vendored onnxruntime-web),
 * sessionOptions (passed to InferenceSession.create), cache (a Cache Storage name: keep the
 * files there and read them from there next time), headers (sent with every request, e.g. a
 * server's `Authorization: Bearer <key>`). */
export async function loadHere(base, options = {}) {
  if (!options.ort && !IS_NODE) {
    const problem = browserProblem();
    if (problem) throw new UnsupportedBrowserError(problem);
  }
  const store = options.cache ? { cache: options.cache, warnings: [] } : null;
  const headers = plainHeaders(options.headers);
  const settings = JSON.parse(new TextDecoder().decode(await readBytes(resolve(base, "model.json"), null, headers)));
  if (settings.format !== "anuvad-web") throw new Error(`${base}: not an anuvad web export`);
  const sessionOptions = options.sessionOptions || {};
  const files = settings.files;
  const runtime = options.ort ? [] : [settings.wasm];
  const [encoderBytes, decoderBytes, sourceBytes, targetBytes, spmSource, wasmBytes] = await Promise.all(
    [files.encoder, files.decoder, files.source_spm, files.target_spm, settings.sentencepiece_js, ...runtime].map((f) =>
      readBytes(resolve(base, f), store, headers),
    ),
  );
  const ort = options.ort || (await defaultOrt(wasmBytes));
  const spm = await importSource(spmSource);
  const encoder = await ort.InferenceSession.create(encoderBytes, sessionOptions);
  const decoder = await ort.InferenceSession.create(decoderBytes, sessionOptions);
  const sourceSpm = await sentencePiece(spm, sourceBytes);
  const targetSpm = await sentencePiece(spm, targetBytes);
  const translator = new Translator(settings, ort, encoder, decoder, sourceSpm, targetSpm);
  translator.warnings = store ? store.warnings : [];
  return translator;
}

/** A translator running in a Web Worker: the same translate(texts, options) as Translator. */
export class WorkerTranslator {
  constructor(worker, settings) {
    this.worker = worker;
    this.settings = settings;
    this.direction = settings.direction;
    this.next = 0;
    this.pending = new Map();
    worker.onmessage = (event) => {
      const { id, result, error } = event.data;
      const call = this.pending.get(id);
      if (!call) return;
      this.pending.delete(id);
      if (error) {
        const failure =
          error.name === "AbortError"
            ? new AbortError(error.message)
            : error.name === "UnsupportedBrowserError"
              ? new UnsupportedBrowserError(error.message)
              : new Error(error.message);
        call.reject(failure);
      } else call.resolve(result);
    };
  }

  call(message, signal) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (signal) signal.addEventListener("abort", () => this.worker.postMessage({ type: "abort", target: id }), { once: true });
      this.worker.postMessage({ ...message, id });
    });
  }

  translate(texts, options = {}) {
    const { signal, ...rest } = options;
    if (signal && signal.aborted) return Promise.reject(new AbortError());
    return this.call({ type: "translate", texts, options: rest }, signal);
  }

  translateText(text, options = {}) {
    return translateText(this, text, options);
  }

  terminate() {
    this.worker.terminate();
  }
}

/** Load the export at `base`: in a page, in a Web Worker (options.worker false: in this
 * thread); under Node, in this thread (see loadHere for the options). */
export async function load(base, options = {}) {
  const useWorker = options.worker ?? (!IS_NODE && typeof Worker !== "undefined" && typeof window !== "undefined");
  if (!useWorker) return loadHere(base, options);
  const problem = browserProblem();
  if (problem) throw new UnsupportedBrowserError(problem);
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  const proxy = new WorkerTranslator(worker, {});
  const absolute = resolve(base, "");
  let loaded;
  try {
    const headers = plainHeaders(options.headers);
    loaded = await proxy.call({ type: "load", base: absolute, cache: options.cache || null, headers });
  } catch (error) {
    worker.terminate();
    throw error;
  }
  proxy.settings = loaded.settings;
  proxy.warnings = loaded.warnings;
  proxy.direction = proxy.settings.direction;
  return proxy;
}

export default { load, loadHere, browserProblem, AbortError, UnsupportedBrowserError };
