"""Text in, text out: the one object the CLI, the server and validation translate with.

It tokenizes, batches sentences of similar length together (by sentence count or by source
tokens), runs greedy search (beam size 1) or beam search, detokenizes, and returns results in
input order, with n-best lists and, on request, attention matrices for heatmaps.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import torch

from anuvad.checkpoint import ModelFile, load_model
from anuvad.data.batching import collate_source
from anuvad.data.language_tokens import resolve_pair
from anuvad.data.tokenizer import EOS_ID
from anuvad.decode_config import DecodeConfig
from anuvad.decoding.beam import beam_search
from anuvad.decoding.constraints import OutputConstraint, search_constraint
from anuvad.decoding.greedy import greedy_search
from anuvad.decoding.search import BetweenSteps, Hypothesis, output_limits
from anuvad.device import resolve_device
from anuvad.errors import ConfigError
from anuvad.evaluation.confidence_model import ConfidenceModel
from anuvad.inference.attention import attention_matrices
from anuvad.inference.carrying import readable_and_spelled
from anuvad.inference.cpu import accelerate
from anuvad.inference.frontend import encode_sources, translate_encoded
from anuvad.inference.glossary import Glossary
from anuvad.inference.number_words import read_sources, restore_sources
from anuvad.inference.placeholders import Hidden, reveal_candidates, reveal_words
from anuvad.inference.post_search import finish
from anuvad.inference.punctuation import close_candidates, punctuate_candidates
from anuvad.inference.quality import assess_best, load_confidence, use_reverse
from anuvad.inference.required import (
    Requirements,
    batch_requirements,
    report_copied,
    search_with_phrases,
)
from anuvad.inference.translation import AttentionView, Candidate, Capabilities, Translation
from anuvad.inference.verbatim import PhraseEncoder, Verbatim, search_policies
from anuvad.model.transformer import count_parameters

logger = logging.getLogger(__name__)
P = ParamSpec("P")
Found = list[list[Candidate]]  # candidates per source, best first
R = TypeVar("R")


def _holding_lock(
    method: Callable[Concatenate[Translator, P], R],
) -> Callable[Concatenate[Translator, P], R]:
    """``method`` run while holding the translator's :attr:`~Translator.lock` (translators of
    one multilingual file share a network and the lock: one model call at a time)."""

    def locked(self: Translator, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.lock:
            return method(self, *args, **kwargs)

    functools.update_wrapper(locked, method)
    return locked


class Translator:
    """Translate sentences with a loaded model file.

    Args:
        model_file: the model, its config and tokenizers (see :func:`anuvad.checkpoint.load_model`).
        decode: search settings; defaults to the ones stored with the model.
        pair: (source, target) language codes of a multilingual model file (an imported NLLB /
            M2M100 model, :mod:`anuvad.data.language_tokens`): which of its pairs to translate,
            in the model's codes or two-letter ones (``("en", "hi")``); None: the file's
            default. Past the constructor the translator's languages (``model_file.config.
            data``) are two-letter codes where there is one, :attr:`pair` the model's own.

    Raises:
        ConfigError: ``pair`` is not one the file offers.
        CheckpointError: the file's language tokens are malformed.
    """

    engine = "torch"
    capabilities = Capabilities(
        glossary=True,
        constraints=True,
        bound_stopping=True,
        quality=True,
        full_attention=True,
        stops_between_steps=True,
        verbatim=True,
    )
    parallel_calls = 1  # not thread-safe: one model call at a time

    def __init__(
        self,
        model_file: ModelFile,
        decode: DecodeConfig | None = None,
        pair: tuple[str, str] | None = None,
    ) -> None:
        resolved = resolve_pair(
            model_file.metadata,
            model_file.config.data,
            model_file.src_tokenizer,
            model_file.tgt_tokenizer,
            pair,
        )
        # The pair in the model's own codes (eng_Latn, hin_Deva); None: a one-pair model.
        self.pair = resolved.pair
        # "en-hi" for a pair of a multilingual file (ids, confidence file names); else None.
        self.pair_name = resolved.name
        # A multilingual model's language tokens: before the source, forced after BOS.
        self.src_prefix, self.tgt_prefix = resolved.src_prefix, resolved.tgt_prefix
        if resolved.pair is not None:  # the pair's languages, two-letter codes where there is one
            config = dataclasses.replace(model_file.config, data=resolved.data)
            model_file = dataclasses.replace(model_file, config=config)
        self.model_file = model_file
        self.model = model_file.model.eval()
        self.src_tokenizer = model_file.src_tokenizer
        self.tgt_tokenizer = model_file.tgt_tokenizer
        self.decode = decode or model_file.config.decode
        self.device = next(self.model.parameters()).device
        self.model_path: Path | None = None
        # Turns a translation's signals into a calibrated confidence (None: not calibrated).
        self.calibration: ConfidenceModel | None = None
        # The target->source model whose view of each output is a confidence feature (None: none).
        self.reverse: Translator | None = None
        # Compute every confidence feature (for fitting a calibration), not only those in use.
        self.all_features = False
        # Room for the language token before the source tokens and EOS after them.
        self.max_src_tokens = model_file.config.model.max_positions - 1 - len(self.src_prefix)
        self._phrase_encoder: PhraseEncoder | None = None  # built on the first required phrase
        # Held by every model call; shared by the translators of one network (inference.pairs).
        self.lock = threading.RLock()

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        device: str = "auto",
        confidence: bool = True,
        pair: tuple[str, str] | None = None,
    ) -> Translator:
        """Load ``path`` (a model file) onto ``device`` ("auto", "cpu", "cuda", ...); ``pair``
        picks one of a multilingual model file's pairs (see :class:`Translator`).

        On a CPU the projections get the faster product for this machine, chosen once and
        then fixed (:func:`anuvad.inference.cpu.accelerate`; ``ANUVAD_CPU_PRODUCT``).

        The confidence model beside the file (``<stem>.confidence.json``, written by
        ``anuvad calibrate``) is loaded when there is one, with the reverse model it needs,
        unless ``confidence`` is False (a caller that never asks for ``quality`` spares the
        second model's load: ~1 s for the shipped ones).

        Raises:
            CheckpointError: the file cannot be loaded.
            ConfigError: ``ANUVAD_CPU_PRODUCT`` is not a product mode, or the confidence model
                beside the file is malformed or belongs to another model file.
        """
        translator = cls(load_model(path, device=resolve_device(device)), pair=pair)
        accelerate(translator.model)
        translator.model_path = Path(path)
        if confidence:
            translator.load_confidence()
        return translator

    def load_confidence(self) -> None:
        """Load the confidence model beside :attr:`model_path` and the reverse model it needs
        (:func:`anuvad.inference.quality.load_confidence`)."""
        load_confidence(self)

    def use_reverse(self, path: str | Path, sha256: str = "") -> None:
        """Load the reverse (target→source) model at ``path`` for the confidence features
        (:func:`anuvad.inference.quality.use_reverse`)."""
        use_reverse(self, path, sha256)

    @property
    def num_parameters(self) -> int:
        """Trainable parameters of the model, each shared matrix counted once."""
        return count_parameters(self.model)

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Source ids per text, as the search gets them (prepared, tokenised, cut to the
        model's length, after a multilingual model's source-language token; no EOS)."""
        data = self.model_file.config.data
        return encode_sources(texts, data, self.src_tokenizer, self.max_src_tokens, self.src_prefix)

    def settings(self, **changes: Any) -> DecodeConfig:
        """This translator's decode settings with ``changes`` (None values ignored).

        Raises:
            ConfigError: a resulting setting is invalid (each one named).
        """
        return self.decode.with_overrides(**changes)

    @_holding_lock
    def translate(
        self,
        texts: Sequence[str],
        settings: DecodeConfig | None = None,
        *,
        use_cache: bool = True,
        progress: Callable[[int], object] | None = None,
        constraint: OutputConstraint | None = None,
        stop: BetweenSteps | None = None,
        glossary: Glossary | Sequence[Glossary | None] | None = None,
        quality: bool = False,
        verbatim: Verbatim | Sequence[Verbatim | None] | None = None,
    ) -> list[Translation]:
        """Translate ``texts``, batching similar lengths; results in input order.

        Args:
            texts: sentences (empty ones translate to "").
            settings: every search setting (beam size, n-best, length penalty, output limit
                ``a * source tokens + b``, early stopping, repetition blocking); None: the
                model's (:attr:`decode`). Beam size 1 is greedy search.
            use_cache: key/value cache (False: re-run the decoder each step, for benchmarks).
            progress: called with the number of sentences each finished batch held.
            constraint: restricts what the search may output (e.g. well-formed trees); combined
                with ``settings.no_repeat_ngram_size``.
            stop: asked before every batch and decoding step; True ends the call (a request
                past its deadline, a client gone) within one step.
            glossary: terms whose translations the outputs must contain: every text's output
                (each n-best candidate) holds the target phrase of every term that occurs in
                it, as a whole word (:mod:`anuvad.inference.glossary` says when a term
                occurs); one glossary for all texts or one per text (None: none for that text).
            verbatim: what the outputs must copy from their sources (numbers, links, e-mail
                addresses, marked names: :mod:`anuvad.inference.verbatim`), required like
                glossary terms; one policy for all texts or one per text (None: nothing
                required for that text, ``copied`` empty). A text in which nothing is found
                translates exactly as without.
            quality: also give each best output its word probabilities and (with a
                :attr:`calibration`) its confidence (:class:`Quality`: the search records
                what it needs; with a :attr:`reverse` model, one forced pass of it per batch).

        Raises:
            ConfigError: an invalid setting (each one named).
            DataError: a glossary translation the target vocabulary cannot spell.
            SearchStoppedError: ``stop`` said so.
        """
        d = settings or self.decode
        found = d.problems()
        if found:
            raise ConfigError("; ".join(found))
        vocab_size = self.model_file.config.model.tgt_vocab_size
        tgt_lang = self.model_file.config.data.tgt_lang
        readings = read_sources(texts, verbatim, self.model_file.config.data.src_lang, glossary)
        texts = [reading.text for reading in readings]  # "ढाई सौ" read as "250"
        required: list[Requirements] | None = None
        hidden: list[Hidden | None] = [None] * len(texts)  # addresses behind placeholders
        if glossary is not None or verbatim is not None:
            data = self.model_file.config.data
            policies = search_policies(verbatim, len(texts), (data.src_lang, data.tgt_lang))
            required = batch_requirements(texts, glossary, policies, self.phrase_encoder)
            hidden = [own.hidden for own in required]
        # What each output must hold, as text (greedy search may write it after the final mark).
        wanted = [own.texts for own in required or [Requirements()] * len(texts)]

        def search(sources: list[list[int]], d: DecodeConfig, indices: list[int]) -> Found:
            # The beam's other hypotheses are a confidence signal: the search keeps them anyway.
            wide = d.with_overrides(nbest=d.beam_size) if quality and d.nbest < d.beam_size else d

            def run(chosen: list[list[int]], terms: OutputConstraint | None) -> Found:
                combined = search_constraint(
                    d.no_repeat_ngram_size, vocab_size, constraint, terms, self.may_run
                )
                return self._search(chosen, wide, use_cache, combined, stop, signals=quality)

            if required is None:
                candidates = run(sources, None)
            else:
                limits = output_limits(
                    self.model, collate_source(sources)[1], d, len(self.tgt_prefix)
                )
                batch = [required[i] for i in indices]
                candidates = search_with_phrases(
                    sources, batch, run, self.phrase_encoder, vocab_size, limits, d
                )
            originals, own = [texts[i] for i in indices], [hidden[i] for i in indices]
            found = reveal_candidates(candidates, own)
            if d.beam_size == 1:
                close_candidates(found, [wanted[i] for i in indices])
            punctuate_candidates(found, originals, tgt_lang)
            if not quality:
                return found
            assess_best(self, [texts[i] for i in indices], sources, candidates)
            reveal_words(candidates, own)
            return [c[: d.nbest] for c in candidates]

        seen = [texts[i] if h is None else h.text for i, h in enumerate(hidden)]
        results = translate_encoded(texts, self.encode(seen), d, search, progress, stop=stop)
        for result, read in zip(results, seen, strict=True):
            result.read = read if read != result.source else ""
        if required is not None:
            report_copied(results, required)
        spellable = readable_and_spelled(self.src_tokenizer, self.phrase_encoder.spellable)
        finish(results, verbatim, self.model_file.config.data.src_lang, tgt_lang, spellable)
        restore_sources(results, readings)
        return results

    @functools.cached_property
    def may_run(self) -> torch.Tensor:
        """(V,) bool: the target pieces that may come three times in a row under repetition
        blocking (those with a digit: "1000"; :class:`~anuvad.decoding.constraints.
        NoRepeatNGram`)."""
        pieces = self.tgt_tokenizer.id_to_piece(list(range(self.tgt_tokenizer.vocab_size)))
        return torch.tensor([any(c.isdigit() for c in piece) for piece in pieces])

    @property
    def phrase_encoder(self) -> PhraseEncoder:
        """Required phrases for this model's target vocabulary (built once, on first use)."""
        if self._phrase_encoder is None:
            self._phrase_encoder = PhraseEncoder(self.tgt_tokenizer)
        return self._phrase_encoder

    def _search(
        self,
        sources: list[list[int]],
        d: DecodeConfig,
        use_cache: bool,
        constraint: OutputConstraint | None,
        stop: BetweenSteps | None = None,
        signals: bool = False,
    ) -> list[list[Candidate]]:
        """Greedy (beam 1) or beam search over one batch of source ids: candidates per source
        (``signals``: with what the search saw of each token, for
        :func:`~anuvad.inference.quality.assess_best`)."""
        src_ids, src_pad_mask = collate_source(sources)  # (B, S) each
        src_ids, src_pad_mask = src_ids.to(self.device), src_pad_mask.to(self.device)
        hypotheses: list[list[Hypothesis]]
        if d.beam_size == 1:  # greedy search: identical to beam 1, without the bookkeeping
            greedy = greedy_search(
                self.model, src_ids, src_pad_mask, d, use_cache=use_cache, constraint=constraint,
                stop=stop, signals=signals, tgt_prefix=self.tgt_prefix,
            )  # fmt: skip
            hypotheses = [[h] for h in greedy]
        else:
            hypotheses = beam_search(
                self.model, src_ids, src_pad_mask, d, use_cache=use_cache, constraint=constraint,
                stop=stop, signals=signals, tgt_prefix=self.tgt_prefix,
            )  # fmt: skip
        return [self._candidates(hyps) for hyps in hypotheses]

    def _candidates(self, hyps: list[Hypothesis]) -> list[Candidate]:
        candidates = [
            Candidate(
                self.tgt_tokenizer.decode(h.token_ids),
                h.token_ids,
                h.score,
                h.log_prob,
                h.finished,
                signals=h.signals,
            )
            for h in hyps
        ]
        if not candidates:  # only when no token could be generated at all
            candidates = [Candidate("", [], float("-inf"), float("-inf"), False)]
        return candidates

    def translate_text(
        self, texts: Sequence[str], constraint: OutputConstraint | None = None
    ) -> list[str]:
        """Like :meth:`translate` with the model's settings, returning only the output strings."""
        return [t.text for t in self.translate(texts, constraint=constraint)]

    def attention(self, text: str, settings: DecodeConfig | None = None) -> AttentionView:
        """Translate one sentence (``settings`` as in :meth:`translate`) and return the
        attention of its best hypothesis."""
        (result,) = self.translate([text], settings)
        return self.attention_of(result)

    @_holding_lock
    def attention_of(self, result: Translation) -> AttentionView:
        """The attention view of a translation :meth:`translate` returned (its best output),
        over the source as the model read it (:attr:`Translation.read`)."""
        text = result.source
        src = [*self.encode([result.read or text])[0], EOS_ID]
        src_ids = torch.tensor(src, device=self.device)  # (S,)
        matrices = attention_matrices(
            self.model, src_ids, result.token_ids, result.finished, self.tgt_prefix
        )
        tgt = result.token_ids + ([EOS_ID] if result.finished else [])
        cross = matrices.cross_attention  # (layers, H, T, S)
        return AttentionView(
            source=text,
            text=result.text,
            src_tokens=self.src_tokenizer.id_to_piece(src),
            tgt_tokens=self.tgt_tokenizer.id_to_piece(tgt),
            cross_attention=cross.cpu().tolist(),
            cosine_similarity=matrices.cosine_similarity.cpu().tolist(),
            num_layers=int(cross.size(0)),
            num_heads=int(cross.size(1)),
            score=result.score,
        )
