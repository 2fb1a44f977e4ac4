// Greedy and beam search over a step decoder, the same rules as anuvad's torch engine
// (src/anuvad/decoding/greedy.py, beam.py, constraints.py): the same output limit, the same
// candidates (the 2K best continuations, EOS among the first K ends a hypothesis), the same
// length penalty and early-stopping rules, the same repetition blocking, so that the tokens
// are the torch engine's. Sums of log-probabilities are rounded to float32 (Math.fround) as
// the torch search's float32 tensors round them.
//
// A decoder is { async step(lastTokens: number[]) -> Float32Array (rows x V log-probabilities,
// PAD and BOS at -inf), keep(rows: number[]) }: keep makes row i the old row rows[i].

export const NEG_INF = -Infinity;

export class AbortError extends Error {
  constructor(message = "the translation was stopped") {
    super(message);
    this.name = "AbortError";
  }
}

const YIELD_MS = 15;
let lastYield = 0;

/** Let the thread's other tasks run (a macrotask turn: a MessageChannel message, which no
 * timer clamps) when YIELD_MS have passed since the last time. onnxruntime-web's run resolves
 * through microtasks only, so without this a whole translation is one task and a Web Worker
 * never sees the page's "stop" message until it is over. */
async function yieldNow() {
  const now = typeof performance !== "undefined" ? performance.now() : Date.now();
  if (now - lastYield < YIELD_MS || typeof MessageChannel === "undefined") return;
  await new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(null);
  });
  lastYield = typeof performance !== "undefined" ? performance.now() : Date.now();
}

/** Between two decoding steps: stop with an AbortError once `signal` is aborted. */
async function checkAbort(signal) {
  if (!signal) return;
  await yieldNow();
  if (signal.aborted) throw new AbortError();
}

/** floor(a * source length with EOS, in float32) + b, capped by the positions (search.py). */
export function outputLimit(srcLengthWithEos, search, maxPositions) {
  let limit = Math.floor(Math.fround(Math.fround(srcLengthWithEos) * Math.fround(search.max_len_a)));
  limit += search.max_len_b;
  let top = maxPositions - 1;
  if (search.max_output_tokens > 0) top = Math.min(top, search.max_output_tokens);
  return Math.max(0, Math.min(limit, top));
}

/** lp(Y): ((5 + |Y|) / 6) ** alpha (GNMT) or |Y| ** alpha ("power"). */
export function lengthNormalizer(length, alpha, form) {
  if (form === "power") return Math.pow(Math.max(length, 1), alpha);
  return Math.pow((5 + length) / 6, alpha);
}

/** Tokens a row may not take next under no_repeat_ngram_size n (constraints.NoRepeatNGram):
 * every token that would repeat an n-gram of the row, and (n > 2) the last token a third time
 * in a row unless it may run (a digit piece). EOS is always allowed. */
export function blockedTokens(history, n, mayRun, eosId) {
  const blocked = new Set();
  const t = history.length;
  if (n <= 0) return blocked;
  if (t >= n) {
    for (let s = 0; s + n <= t; s++) {
      let same = true;
      for (let j = 0; j < n - 1; j++) {
        if (history[s + j] !== history[t - (n - 1) + j]) { same = false; break; }
      }
      if (same) blocked.add(history[s + n - 1]);
    }
  }
  if (n > 2 && t >= 2) {
    const last = history[t - 1];
    if (last === history[t - 2] && !mayRun.has(last)) blocked.add(last);
  }
  blocked.delete(eosId);
  return blocked;
}

function applyBlocked(logProbs, row, vocab, blocked) {
  for (const token of blocked) logProbs[row * vocab + token] = NEG_INF;
}

/** Greedy search (greedy.py): one hypothesis per sentence. */
export async function greedySearch(decoder, limits, ctx) {
  const { vocab, ids, search, mayRun, signal } = ctx;
  const batch = limits.length;
  const tokens = Array.from({ length: batch }, () => []);
  const scores = new Array(batch).fill(0);
  const finished = new Array(batch).fill(false);
  let active = [...Array(batch).keys()];
  let last = new Array(batch).fill(ids.bos);
  const maxLimit = Math.max(0, ...limits);
  for (let step = 0; step < maxLimit; step++) {
    await checkAbort(signal);
    const logProbs = await decoder.step(last);
    const keep = [];
    const next = [];
    active.forEach((row, i) => {
      if (search.no_repeat_ngram_size > 0) {
        applyBlocked(logProbs, i, vocab, blockedTokens(tokens[row], search.no_repeat_ngram_size, mayRun, ids.eos));
      }
      let best = 0;
      let bestScore = logProbs[i * vocab];
      for (let v = 1; v < vocab; v++) {
        const value = logProbs[i * vocab + v];
        if (value > bestScore) { bestScore = value; best = v; }
      }
      if (step >= limits[row] || bestScore === NEG_INF) return;
      scores[row] += bestScore;
      if (best === ids.eos) { finished[row] = true; return; }
      tokens[row].push(best);
      keep.push(i);
      next.push(best);
    });
    if (keep.length === 0) break;
    if (keep.length < active.length) {
      decoder.keep(keep);
      active = keep.map((i) => active[i]);
    }
    last = next;
  }
  return tokens.map((t, i) => [{ token_ids: t, score: scores[i], log_prob: scores[i], finished: finished[i] }]);
}

class Sentence {
  constructor(limit, search) {
    this.k = search.beam_size;
    this.limit = limit;
    this.search = search;
    this.finished = [];
  }
  normalizer(numTokens) {
    return lengthNormalizer(numTokens, this.search.length_penalty, this.search.length_normalization);
  }
  add(tokenIds, logProb, finished) {
    const score = logProb / this.normalizer(tokenIds.length + (finished ? 1 : 0));
    this.finished.push({ token_ids: tokenIds, score, log_prob: logProb, finished });
  }
  worstKept() {
    if (this.finished.length < this.k) return NEG_INF;
    return this.finished.map((h) => h.score).sort((a, b) => b - a)[this.k - 1];
  }
  cannotImprove(bestActive, numTokens) {
    if (bestActive === NEG_INF) return true;
    const worst = this.worstKept();
    if (worst === NEG_INF) return false;
    const rule = this.search.early_stopping;
    if (rule === "finished") return true;
    if (rule === "heuristic") return bestActive / this.normalizer(numTokens) <= worst;
    const largest = Math.max(this.normalizer(numTokens), this.normalizer(this.limit));
    return bestActive / largest <= worst;
  }
  nbest(count) {
    return [...this.finished].sort((a, b) => b.score - a.score).slice(0, count);
  }
}

/** The `count` largest of one sentence's K x V candidates, best first, earlier index first
 * among equals: [flatIndex, value] pairs. */
function topCandidates(scores, logProbs, first, k, vocab, count) {
  const top = [];
  for (let beam = 0; beam < k; beam++) {
    const base = scores[beam];
    if (base === NEG_INF) continue;
    const offset = (first + beam) * vocab;
    for (let v = 0; v < vocab; v++) {
      const value = Math.fround(base + logProbs[offset + v]);
      if (top.length === count && !(value > top[count - 1][1])) continue;
      let at = top.length;
      while (at > 0 && value > top[at - 1][1]) at--;
      top.splice(at, 0, [beam * vocab + v, value]);
      if (top.length > count) top.pop();
    }
  }
  return top;
}

/** Beam search (beam.py): per sentence, up to nbest hypotheses, best first. */
export async function beamSearch(decoder, limits, ctx) {
  const { vocab, ids, search, mayRun, signal } = ctx;
  const k = search.beam_size;
  const sentences = limits.map((limit) => new Sentence(limit, search));
  let active = [...limits.keys()];
  let scores = active.map(() => [0, ...new Array(k - 1).fill(NEG_INF)]);
  let history = Array.from({ length: active.length * k }, () => []);
  let last = new Array(active.length * k).fill(ids.bos);
  for (let step = 0; active.length > 0; step++) {
    await checkAbort(signal);
    // retire: sentences at their length limit end with their live beams unfinished
    const remaining = [];
    active.forEach((b, i) => {
      if (step >= sentences[b].limit) {
        scores[i].forEach((logProb, j) => {
          if (logProb > NEG_INF) sentences[b].add(history[i * k + j], logProb, false);
        });
      } else remaining.push(i);
    });
    if (remaining.length < active.length) {
      const rows = remaining.flatMap((i) => [...Array(k).keys()].map((j) => i * k + j));
      if (remaining.length > 0) decoder.keep(rows);
      history = rows.map((r) => history[r]);
      last = rows.map((r) => last[r]);
      scores = remaining.map((i) => scores[i]);
      active = remaining.map((i) => active[i]);
      if (active.length === 0) break;
    }
    const logProbs = await decoder.step(last);
    if (search.no_repeat_ngram_size > 0) {
      history.forEach((h, row) => applyBlocked(logProbs, row, vocab, blockedTokens(h, search.no_repeat_ngram_size, mayRun, ids.eos)));
    }
    // choose: the 2K best continuations of each sentence's K beams
    const kept = [];
    const rows = [];
    const tokens = [];
    const nextScores = [];
    active.forEach((b, i) => {
      const sentence = sentences[b];
      const top = topCandidates(scores[i], logProbs, i * k, k, vocab, Math.min(2 * k, k * vocab));
      const chosen = [];
      for (let rank = 0; rank < top.length; rank++) {
        const [flat, value] = top[rank];
        if (value === NEG_INF || chosen.length === k) break;
        const beam = Math.floor(flat / vocab);
        const token = flat % vocab;
        if (token === ids.eos) {
          if (rank < k) sentence.add(history[i * k + beam], value, true);
        } else chosen.push([beam, token, value]);
      }
      const bestActive = chosen.length > 0 ? chosen[0][2] : NEG_INF;
      if (sentence.cannotImprove(bestActive, step + 1)) return;
      while (chosen.length < k) chosen.push([chosen[0][0], chosen[0][1], NEG_INF]);
      kept.push(i);
      for (const [beam, token] of chosen) {
        rows.push(i * k + beam);
        tokens.push(token);
      }
      nextScores.push(chosen.map((c) => c[2]));
    });
    // advance: every row follows the beam it continues
    if (kept.length === 0) break;
    decoder.keep(rows);
    history = rows.map((r, n) => [...history[r], tokens[n]]);
    last = tokens;
    scores = nextScores;
    active = kept.map((i) => active[i]);
  }
  return sentences.map((s) => s.nbest(Math.min(search.nbest, k)));
}
