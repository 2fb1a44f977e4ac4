"""What a ``/translate`` request asks of the model, and its answer put together.

:func:`plan_request` turns a request into a :class:`RequestPlan`: the model (the one named, or
the one that reads the texts' language: :mod:`anuvad.server.routing`), its search settings, the
glossary, and the sentences to translate with their places. A plain text is split into
sentences (:mod:`anuvad.inference.documents`); an HTML text (``format: "html"``) into its text
runs first (:mod:`anuvad.inference.markup`), each split in turn. All sentences of all texts go
to the model's micro-batcher as one list; :meth:`RequestPlan.response` puts the translations
back: into each text's layout, or between the HTML's tags. ``POST /translate`` and
``POST /translate/stream`` share both, so they answer alike.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from anuvad.data.tokenizer import Tokenizer
from anuvad.decode_config import DecodeConfig
from anuvad.errors import ConfigError, DataError, InputTooLongError
from anuvad.inference.documents import (
    DocumentTranslation,
    Segment,
    assemble_documents,
    count_sentences,
    split_document,
    whole_text,
)
from anuvad.inference.glossary import UNSPELLABLE, Glossary
from anuvad.inference.inline import PlacedSentence
from anuvad.inference.markup import UnitTranslation, html_units, translate_html
from anuvad.inference.translation import Translation
from anuvad.inference.verbatim import Verbatim
from anuvad.server.alignments import align_sentences
from anuvad.server.answer_schemas import SentenceOut, TranslateResponse, TranslationOut
from anuvad.server.errors import ModelFailedError, NamesRefusedError, TextRefusedError
from anuvad.server.jobs import Progress
from anuvad.server.responses import document_out, sentence_out, text_out
from anuvad.server.routing import choose_model
from anuvad.server.schemas import Decoding, TermsAndSearch, TranslateRequest
from anuvad.server.settings import search_settings
from anuvad.server.state import ServedModel, ServerState


@dataclass(frozen=True)
class Unit:
    """What is split into sentences and put back together: a plain text, or one unit of an
    HTML text (a text run, or runs joined by inline elements: unescaped and stripped).

    Attributes:
        text: which text of the request it belongs to.
        run: its index among that text's units (None: a plain text).
        source: the text or unit.
        segments: its sentences and their places in ``source``.
        first: the index of its first sentence among its text's sentences.
        inline: an HTML unit with inline elements, placed by word alignment.
    """

    text: int
    run: int | None
    source: str
    segments: list[Segment]
    first: int
    inline: bool = False


@dataclass(frozen=True)
class RequestPlan:
    """A ``/translate`` request ready for the model: who translates what, and how."""

    model: ServedModel
    settings: DecodeConfig
    texts: list[str]
    html: bool
    units: list[Unit]
    terms: Glossary | None
    verbatim: Verbatim | None
    detected_language: str | None
    decoding: Decoding
    names: bool = False  # write the names the model misses in its own spelling
    align: bool = False  # every sentence's word alignment in the answer
    # per sentence (of an inline HTML unit; of all with align): its word alignment (by work)
    alignments: dict[int, list[int] | None] = field(default_factory=dict)

    def work(
        self, state: ServerState, quality: bool, progress: Progress | None = None
    ) -> Coroutine[Any, Any, list[Translation]]:
        """The model work: every sentence through the model's micro-batcher, within the
        server's time limit (``quality``: scores; ``progress``: told each model call's
        translations, for a stream; with :attr:`names`, a second pass for the sentences that
        missed one: :mod:`anuvad.server.names`). Await it through
        :meth:`ServerState.model_work`."""
        timeout = state.limits.request_timeout_s
        deadline = None if timeout is None else time.monotonic() + timeout
        first = self.model.batcher.translate(
            self.sentences(),
            self.settings,
            timeout,
            self.terms,
            quality=quality,
            progress=progress,
            verbatim=self.verbatim,
        )
        if not self.names and not self.html and not self.align:
            return first
        return self._then(first, deadline, quality)

    async def _then(
        self, first: Coroutine[Any, Any, list[Translation]], deadline: float | None, quality: bool
    ) -> list[Translation]:
        """The first pass's results, with the names pass (:attr:`names`) and the word
        alignments of the inline HTML units' sentences, or of all with :attr:`align` (on the
        model's thread)."""
        from anuvad.server.names import with_names

        results = await first
        if self.names:
            results = await with_names(
                self.model, self.sentences(), results, self.settings, deadline, self.terms,
                quality, self.verbatim,
            )  # fmt: skip
        wanted = [i for i, (unit, _, _) in enumerate(self.places) if unit.inline or self.align]
        self.alignments.update(await align_sentences(self.model, results, wanted, deadline))
        return results

    def sentences(self) -> list[str]:
        """Every sentence to translate, all texts' in order."""
        return [segment.text for unit in self.units for segment in unit.segments]

    @functools.cached_property
    def places(self) -> list[tuple[Unit, int, Segment]]:
        """Per sentence (in :meth:`sentences` order): its unit, its index in its text, its
        segment."""
        return [
            (unit, unit.first + j, segment)
            for unit in self.units
            for j, segment in enumerate(unit.segments)
        ]

    def sentence_counts(self) -> list[int]:
        """How many sentences each text holds."""
        counts = [0] * len(self.texts)
        for unit in self.units:
            counts[unit.text] += len(unit.segments)
        return counts

    def sentence(self, index: int, result: Translation) -> SentenceOut:
        """The answer for sentence ``index`` (of :meth:`sentences`)."""
        unit, _, segment = self.places[index]
        alignment = self.alignments.get(index) if self.align else None
        return sentence_out(segment, result, self.terms, self.tokenizer, unit.run, alignment)

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's target tokenizer (spells the pieces of word probabilities)."""
        return self.model.engine.tgt_tokenizer

    def response(self, results: Sequence[Translation], elapsed_ms: float) -> TranslateResponse:
        """The answer: each text with its translation, in request order."""
        documents = assemble_documents(
            [u.source for u in self.units], [u.segments for u in self.units], results
        )
        outs: list[TranslationOut] = []
        for i, text in enumerate(self.texts):
            mine = [(u, d) for u, d in zip(self.units, documents, strict=True) if u.text == i]
            if not self.html:
                unit, document = mine[0]  # a plain text is one unit
                alignments = [a for _, a in self._alignments(unit)]
                outs.append(document_out(document, self.terms, self.tokenizer, alignments))
                continue
            placed = [self._placed(unit, document) for unit, document in mine]
            out = translate_html(text, _given(placed), self.model.info.tgt_lang)
            sentences = [
                self.sentence(index, result)
                for unit, document in mine
                for (index, _), result in zip(
                    self._alignments(unit), document.sentences, strict=True
                )
            ]
            outs.append(text_out(text, out, sentences, keep_nbest=False))
        return TranslateResponse(
            translations=outs,
            model=self.model.id,
            detected_language=self.detected_language,
            decoding=self.decoding,
            beam_size=self.settings.beam_size,
            elapsed_ms=elapsed_ms,
        )

    @functools.cached_property
    def _firsts(self) -> dict[int, int]:
        """Each unit's (by ``id``) first sentence's index in :meth:`sentences`."""
        firsts, count = {}, 0
        for unit in self.units:
            firsts[id(unit)] = count
            count += len(unit.segments)
        return firsts

    def _alignments(self, unit: Unit) -> list[tuple[int, list[int] | None]]:
        """Each sentence of ``unit``: its index (of :meth:`sentences`) and word alignment in
        the answer (None unless asked for)."""
        first = self._firsts[id(unit)]
        return [
            (k, self.alignments.get(k) if self.align else None)
            for k in range(first, first + len(unit.segments))
        ]

    def _placed(self, unit: Unit, document: DocumentTranslation[Translation]) -> UnitTranslation:
        """A unit's translation, with its sentences' places and word alignments."""
        if not unit.inline:
            return UnitTranslation(document.text)
        indices = [k for k, _ in self._alignments(unit)]
        return UnitTranslation(
            document.text,
            [
                PlacedSentence(segment.start, segment.end, result.text, self.alignments.get(k))
                for k, segment, result in zip(
                    indices, document.segments, document.sentences, strict=True
                )
            ],
        )


def _given(translations: list[UnitTranslation]) -> Callable[[Sequence[str]], list[UnitTranslation]]:
    """A ``translate`` for :func:`translate_html` that hands out ``translations`` (made
    already, one per unit)."""

    def translate(runs: Sequence[str]) -> list[UnitTranslation]:
        assert len(runs) == len(translations), "the runs are split_html's both times"
        return translations

    return translate


async def plan_request(state: ServerState, body: TranslateRequest) -> RequestPlan:
    """What ``body`` asks of the model (the checks that need no model, done before it).

    Raises:
        UnknownModelError, WrongLanguageError, TextRefusedError, ModelFailedError: 422s naming
            the field (:func:`choose_model`, :func:`plan_units`, :func:`request_glossary`,
            :func:`search_settings`).
    """
    texts = body.texts()
    html = body.format == "html"
    # Sentence splitting and markup parsing are CPU work: off the event loop.
    pieces = await asyncio.to_thread(_pieces, texts, html)
    readable = ["\n".join(p[2] for p in pieces if p[0] == n) for n in range(len(texts))]
    model, detected = choose_model(state, body.model, readable)
    settings = search_settings(model.engine, body)
    units = await asyncio.to_thread(plan_units, pieces, model, body.split_sentences)
    terms = request_glossary(state, model, body)
    policy = verbatim_policy(body)
    names = body.names == "model"
    if names and (model.info.src_lang, model.info.tgt_lang) != ("en", "hi"):
        raise NamesRefusedError(
            f"names writes English names in Devanagari; the model {model.id!r} translates "
            f"{model.info.src_lang}->{model.info.tgt_lang}: send names 'off'"
        )
    return RequestPlan(
        model, settings, texts, html, units, terms, policy, detected, body.decoding, names,
        body.alignment,
    )  # fmt: skip


Piece = tuple[int, int | None, str, bool]  # text index, unit index or None, its text, inline


def _pieces(texts: Sequence[str], html: bool) -> list[Piece]:
    """(text index, unit index or None, the text or unit, whether it has inline elements) of
    what is to be translated."""
    if not html:
        return [(i, None, text, False) for i, text in enumerate(texts)]
    return [
        (i, r, unit.text, unit.block is not None)
        for i, text in enumerate(texts)
        for r, unit in enumerate(html_units(text))
    ]


def plan_units(pieces: Sequence[Piece], model: ServedModel, split_sentences: bool) -> list[Unit]:
    """Each piece's sentences, with their places in it: split (a sentence too long for the
    model cut at its clauses), or, with ``split_sentences`` false, the whole piece as one
    sentence.

    Raises:
        TextRefusedError: a sentence the model cannot take even cut; or, unsplit, a piece that
            is too long or holds several sentences (the model would translate the first and
            stop: text is never dropped silently, issue 33).
    """
    lang, fits = model.info.src_lang, model.fits
    units: list[Unit] = []
    counts: dict[int, int] = {}
    for i, run, source, inline in pieces:
        which = f"text[{i}]" if run is None else f"text[{i}] (its text run {run})"
        if split_sentences:
            try:
                segments = split_document(source, lang, fits=model.fits_well, must_fit=fits)
            except InputTooLongError as exc:
                raise TextRefusedError(f"{which}: {exc}") from exc
        else:
            sentences = count_sentences(source, lang)
            if sentences > 1:
                raise TextRefusedError(
                    f"{which} holds {sentences} sentences, but with split_sentences false a "
                    "text is translated as one sentence and the model stops after the first; "
                    "send split_sentences true, or one sentence per text"
                )
            segments = whole_text(source)
            if not all(fits(segment.text) for segment in segments):
                raise TextRefusedError(
                    f"{which} is longer than the model can translate as one sentence; send it "
                    "with split_sentences true, or shorter"
                )
        units.append(Unit(i, run, source, segments, counts.get(i, 0), inline))
        counts[i] = counts.get(i, 0) + len(segments)
    return units


def request_glossary(
    state: ServerState, model: ServedModel, body: TermsAndSearch
) -> Glossary | None:
    """The terms a request's translations must use: the server's (default model only) merged
    with the request's own (which wins for a shared term).

    Raises:
        ModelFailedError: 422 when a target cannot be spelled with the model's vocabulary, or
            the model's engine cannot use a glossary.
    """
    try:
        own = Glossary.from_pairs((t.source, t.target) for t in body.glossary or [])
    except DataError as exc:  # a term twice with two translations
        raise ModelFailedError(str(exc).replace("glossary entry ", "glossary."), 422) from exc
    bad = own.unspellable(model.engine.tgt_tokenizer)
    if bad:  # a 422 naming the field, before the model
        i = bad[0]
        raise ModelFailedError(
            f"glossary.{i}.target: {own.entries[i].target!r} {UNSPELLABLE}; use other words for it",
            422,
        )
    base = state.glossary if model is state.default else None
    terms = base.merged(own) if base else own
    if not terms:
        return None
    if not model.engine.capabilities.glossary:
        raise ModelFailedError(
            f"glossary: this model is served by {model.engine.engine}, which cannot use a "
            "glossary; serve it with the torch engine (anuvad serve --engine torch)",
            422,
        )
    return terms


def verbatim_policy(body: TermsAndSearch) -> Verbatim | None:
    """What the request's translations must copy exactly (None: ``verbatim`` false).

    Raises:
        ModelFailedError: 422 for a ``keep`` list the policy refuses, naming the field.
    """
    if not body.verbatim:
        return None
    try:
        return Verbatim(digits=body.digits, keep=tuple(body.keep or ()))
    except ConfigError as exc:
        raise ModelFailedError(str(exc), 422) from exc


__all__ = [
    "RequestPlan",
    "Unit",
    "plan_request",
    "plan_units",
    "request_glossary",
    "verbatim_policy",
]
