"""anuvad's search settings over CTranslate2's ``translate_batch``: one batch of source ids in,
candidates ranked as anuvad ranks them out (:class:`CT2Search`, used by
:class:`anuvad.inference.ct2.engine.CT2Translator`).

How the settings map, and where the two searches differ:

* **Length penalty.** CTranslate2 normalises a finished hypothesis as ``score / |Y| **
  length_penalty``; anuvad uses Wu et al.'s ``((5 + |Y|) / 6) ** length_penalty``. The penalty
  only ranks *finished* hypotheses in both beam searches (live beams are ranked by their summed
  log-probability), so the engine asks CTranslate2 for all K hypotheses with
  ``length_penalty=1`` and ``return_end_token=True`` (|Y| then counts EOS, as anuvad's does),
  recovers each log-probability as ``score * |Y|`` and re-ranks with anuvad's penalty.
  ``length_penalty=1`` (not 0) also keeps CTranslate2 from stopping as soon as its best beam
  ends: like anuvad's default ("finished") rule, a sentence stops once K hypotheses finished.
  Beam 1 is CTranslate2's greedy search with ``length_penalty=0`` (the plain log-probability).
* **Language tokens** (an imported NLLB-200 / M2M100 model, issue 41 item 5): the
  source-language token is the first source piece; the target-language token is
  ``translate_batch``'s ``target_prefix``. CTranslate2 forces it at no cost (log-probability 0,
  as anuvad's search and ``generate``'s ``forced_bos_token_id`` give it), returns it first in
  every hypothesis (dropped here), and counts it in |Y| and in ``max_decoding_length``, as
  anuvad's |Y| counts it; the output limit counts the tokens after it.
* **Length limit.** anuvad allows ``floor(a * source tokens) + b`` output tokens per sentence
  (source tokens count EOS); CTranslate2 has one ``max_decoding_length`` per call. A batch of
  length-sorted sentences is one call with its largest limit; a sentence whose output reached
  its own, smaller limit is searched again alone with that limit (see
  :meth:`CT2Search.search_within`), so the limits are anuvad's while the common case costs one
  call per batch.
* **Sampling** (``sample_top_k``) draws from CTranslate2's own random generators, which
  ``sample_seed`` does not reach (``ctranslate2.set_random_seed`` leaves its worker threads'
  draws unrepeatable: CTranslate2 issue 1757): sampled outputs differ from run to run, where
  anuvad's engine repeats them for a seed.
* **What is not identical.** (1) When more than K hypotheses finish by the last step,
  CTranslate2 keeps the K best by ``score / |Y|`` before anuvad's penalty re-ranks them;
  anuvad's beam search ranks them all. (2) At the length limit anuvad also keeps the beams that
  replaced finished ones; CTranslate2 registers only the top K candidates of that step. Both
  only change n-best lists in rare cases. (3) PAD and BOS cannot be generated in either engine,
  but CTranslate2 normalises the softmax without them (see :mod:`anuvad.inference.ct2.export`), so
  its log-probabilities are higher by -log(1 - p(PAD) - p(BOS)) per step: tiny once trained.
  (4) After a target prefix, CTranslate2 lets EOS end only the best hypothesis of the first
  free step: an EOS ranked 2nd to Kth there is replaced by a dead beam (its
  ``update_sample_with_prefix``, against short outputs winning without normalisation), where
  anuvad and ``generate`` finish the empty output and keep K beams. It changes a beam search
  only where EOS ranks 2nd to Kth right after a multilingual model's language token, which a
  trained model gives a non-empty source almost never (random test models often: the
  measured rates are in tests/unit/inference/test_ct2_m2m100.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from anuvad.data.tokenizer import EOS_ID, Tokenizer
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.search import capped_top, length_normalizer, limits_for_lengths
from anuvad.inference.translation import Candidate

Hypotheses = list[tuple[list[str], float]]  # per hypothesis: pieces (EOS when produced), log-prob


class CT2Search:
    """anuvad's search over one loaded ``ctranslate2.Translator`` for one language pair.

    Args:
        ct2: the loaded CTranslate2 model (shared by every pair's search).
        src_tokenizer: the source pieces' tokenizer.
        tgt_tokenizer: the target pieces' tokenizer.
        tgt_ids: target piece -> id (built once per model: 256k pieces for NLLB).
        tgt_prefix: target ids forced after the decoder start (a language token; empty: none).
        max_positions: the model's position table rows.
    """

    def __init__(
        self,
        ct2: Any,
        src_tokenizer: Tokenizer,
        tgt_tokenizer: Tokenizer,
        tgt_ids: dict[str, int],
        tgt_prefix: Sequence[int],
        max_positions: int,
    ) -> None:
        self.ct2 = ct2
        self.src_tokenizer = src_tokenizer
        self.tgt_tokenizer = tgt_tokenizer
        self._tgt_ids = tgt_ids
        self._eos_piece = tgt_tokenizer.id_to_piece([EOS_ID])[0]
        self.tgt_prefix = list(tgt_prefix)
        self.max_positions = max_positions

    def _pieces(self, ids: Sequence[int]) -> list[str]:
        return self.tgt_tokenizer.id_to_piece(ids)

    def _limits(self, sources: list[list[int]], settings: DecodeConfig) -> list[int]:
        """anuvad's output limits (:func:`anuvad.decoding.search.limits_for_lengths`, EOS
        counted in the source), capped so that BOS + the target prefix + tokens fit the
        positions."""
        lengths = torch.tensor([len(ids) + 1 for ids in sources])  # + EOS
        limits = limits_for_lengths(lengths, settings.max_len_a, settings.max_len_b)
        positions = self.max_positions - len(self.tgt_prefix)
        top = capped_top(positions, settings.max_output_tokens)
        return [int(x) for x in limits.clamp(min=0, max=top).tolist()]

    def search_batch(self, sources: list[list[int]], d: DecodeConfig) -> list[list[Candidate]]:
        """CTranslate2's search over one batch of source ids (each after the source prefix,
        without EOS): ``d.nbest`` candidates per source, best first."""
        limits = self._limits(sources, d)
        pieces = [self.src_tokenizer.id_to_piece(ids) for ids in sources]
        outputs = self.search_within(pieces, limits, d.beam_size, d)
        candidates = []
        for hypotheses in outputs:
            ranked = self.rank(hypotheses, d, d.nbest)
            candidates.append(ranked or [Candidate("", [], 0.0, 0.0, False)])  # a 0-token limit
        return candidates

    def search_within(
        self, sources: list[list[str]], limits: list[int], k: int, settings: DecodeConfig
    ) -> list[Hypotheses]:
        """:meth:`search` with a limit per sentence, in one call where the outputs allow.

        CTranslate2 has one ``max_decoding_length`` per call, so the batch is searched with its
        largest limit. A sentence whose hypotheses all stay shorter than its own limit searched
        exactly as it would have under that limit (its search ended before the limit could
        matter); any other sentence (rare once a model is trained: it reached ``a * source +
        b`` tokens) is searched again alone with its own limit.
        """
        top = max(limits)
        if top <= 0:
            return [[] for _ in sources]
        outputs = self.search(sources, k, top, settings)
        for i, (hypotheses, limit) in enumerate(zip(outputs, limits, strict=True)):
            if limit < top and any(len(pieces) >= limit for pieces, _ in hypotheses):
                outputs[i] = self.search([sources[i]], k, limit, settings)[0] if limit > 0 else []
        return outputs

    def search(
        self, sources: list[list[str]], k: int, limit: int, settings: DecodeConfig
    ) -> list[Hypotheses]:
        """CTranslate2's search: per source, its hypotheses (pieces after the target prefix, EOS
        included when produced) with their summed log-probabilities (repeated n-grams:
        CTranslate2's own block). ``limit`` counts the tokens after the target prefix."""
        batching: dict[str, Any] = (
            {"max_batch_size": settings.max_tokens, "batch_type": "tokens"}
            if settings.max_tokens > 0
            else {}
        )
        forced = len(self.tgt_prefix)
        if forced:
            # CTranslate2 forces the prefix at no cost (log-probability 0, as anuvad's search),
            # returns it in every hypothesis, and counts it in |Y| and in the decoding length.
            batching["target_prefix"] = [self._pieces(self.tgt_prefix)] * len(sources)
        results = self.ct2.translate_batch(
            sources,
            beam_size=k,
            num_hypotheses=k,
            patience=1.0,
            length_penalty=0.0 if k == 1 else 1.0,
            max_decoding_length=limit + forced,
            max_input_length=0,
            return_scores=True,
            return_end_token=True,
            no_repeat_ngram_size=settings.no_repeat_ngram_size,
            # capped at the vocabulary, as anuvad's sampling is (CTranslate2 refuses more)
            sampling_topk=min(settings.sample_top_k, len(self._tgt_ids)) or 1,
            **batching,
        )
        outputs = []
        for result in results:
            hypotheses = []
            for pieces, score in zip(result.hypotheses, result.scores, strict=True):
                # k > 1: CTranslate2's score is log_prob / |Y| (length_penalty=1), |Y| >= 1.
                log_prob = float(score) * (len(pieces) if k > 1 else 1)
                hypotheses.append((list(pieces[forced:]), log_prob))
            outputs.append(hypotheses)
        return outputs

    def rank(self, hypotheses: Hypotheses, d: DecodeConfig, count: int) -> list[Candidate]:
        """anuvad's ``count`` best candidates, best first by anuvad's score (stable for ties);
        only those are detokenized."""
        eos = self._eos_piece
        ranked = []
        for pieces, log_prob in hypotheses:
            finished = bool(pieces) and pieces[-1] == eos
            token_ids = [self._tgt_ids[p] for p in (pieces[:-1] if finished else pieces)]
            # |Y| counts the target prefix, as anuvad's beam search and generate count it.
            length = len(token_ids) + int(finished) + len(self.tgt_prefix)
            score = (
                log_prob
                if d.beam_size == 1
                else log_prob / length_normalizer(length, d.length_penalty, d.length_normalization)
            )
            ranked.append((score, log_prob, finished, token_ids))
        ranked.sort(key=lambda c: -c[0])
        return [
            Candidate(self.tgt_tokenizer.decode(ids), ids, score, log_prob, finished)
            for score, log_prob, finished, ids in ranked[:count]
        ]
