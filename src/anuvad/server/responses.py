"""Turning the engines' results into the API's response models (rounded, JSON-ready)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from anuvad.data.tokenizer import EOS_ID, Tokenizer
from anuvad.decode_config import settings_spec
from anuvad.inference.confidence import document_confidence
from anuvad.inference.documents import DocumentTranslation, Segment, left_as_written
from anuvad.inference.engine import TranslationEngine
from anuvad.inference.glossary import Glossary, used_in
from anuvad.inference.translation import AttentionView, Translation
from anuvad.server.answer_schemas import (
    AttentionResponse,
    CandidateOut,
    CopiedOut,
    SentenceOut,
    TermOut,
    TokenOut,
    TranslationOut,
    WordOut,
)
from anuvad.server.licences import model_licence
from anuvad.server.model_names import model_summary, model_title
from anuvad.server.model_schemas import ConfidenceInfo, ModelInfo


def model_info(translator: TranslationEngine, model_id: str = "") -> ModelInfo:
    """Describe a served model (id, name, languages, size, defaults) for ``GET /models``."""
    config = translator.model_file.config
    model = config.model
    path = getattr(translator, "model_path", None)
    metadata = {
        key: value
        for key, value in translator.model_file.metadata.items()
        if isinstance(value, str | int | float | bool)
    }
    trained_on = config.data.training_summary()
    src_lang, tgt_lang = config.data.src_lang, config.data.tgt_lang
    licence = model_licence([c.name for c in config.data.train], metadata)
    return ModelInfo(
        id=model_id or config.name,
        title=model_title(config.name, src_lang, tgt_lang, metadata),
        summary=model_summary(config.name, trained_on, metadata),
        name=config.name,
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        file=Path(path).name if path else None,
        engine=translator.engine,
        capabilities=translator.capabilities.names(),
        num_parameters=translator.num_parameters,
        d_model=model.d_model,
        num_heads=model.num_heads,
        num_encoder_layers=model.num_encoder_layers,
        num_decoder_layers=model.num_decoder_layers,
        src_vocab_size=model.src_vocab_size,
        tgt_vocab_size=model.tgt_vocab_size,
        default_beam_size=translator.decode.beam_size,
        default_length_penalty=translator.decode.length_penalty,
        defaults={
            f.name: getattr(translator.decode, f.name) for f, spec in settings_spec() if spec.api
        },
        trained_on=trained_on,
        licence=licence.terms if licence else None,
        licence_note=licence.why if licence else "",
        metadata=metadata,
        confidence=confidence_info(translator),
    )


def confidence_info(translator: TranslationEngine) -> ConfidenceInfo | None:
    """How the engine's confidence was calibrated (None: it gives none)."""
    calibration = translator.calibration
    if calibration is None:
        return None
    held_out = calibration.report.get("held_out", {})
    return ConfidenceInfo(
        good_chrf=calibration.good_chrf,
        threshold=calibration.threshold,
        features=calibration.features,
        reverse_model=calibration.reverse_model,
        held_out_auroc={
            domain: pair.get("confidence", {}).get("auroc") for domain, pair in held_out.items()
        },
    )


def candidates_out(translation: Translation) -> list[CandidateOut]:
    return [
        CandidateOut(
            text=c.text,
            score=c.score,
            log_prob=c.log_prob,
            num_tokens=len(c.token_ids),
            finished=c.finished,
        )
        for c in translation.nbest
    ]


def terms_out(glossary: Glossary | None, source: str, translation: str) -> list[TermOut]:
    """The glossary terms that occur in ``source``, each with whether ``translation`` used it."""
    if not glossary:
        return []
    return [
        TermOut(source=e.source, target=e.target, used=used_in(e.target, translation))
        for e in glossary.matches(source)
    ]


def quality_out(result: Translation, tgt_tokenizer: Tokenizer | None) -> dict[str, Any]:
    """A sentence's confidence, flag, word and token probabilities (rounded) as SentenceOut
    fields; nothing when the engine gave no quality."""
    quality = result.quality
    if quality is None:
        return {}
    ids = [*result.token_ids, EOS_ID][: len(quality.token_probs)]
    pieces = tgt_tokenizer.id_to_piece(ids) if tgt_tokenizer is not None else [""] * len(ids)
    return {
        "confidence": None if quality.confidence is None else round(quality.confidence, 4),
        "likely_wrong": quality.likely_wrong,
        "words": [
            WordOut(text=w.text, prob=round(w.prob, 4), start=w.start, end=w.end)
            for w in quality.words
        ],
        "tokens": [
            TokenOut(piece=p, prob=round(x, 4))
            for p, x in zip(pieces, quality.token_probs, strict=True)
        ],
    }


def sentence_out(
    segment: Segment,
    result: Translation,
    glossary: Glossary | None = None,
    tgt_tokenizer: Tokenizer | None = None,
    run: int | None = None,
    alignment: list[int] | None = None,
) -> SentenceOut:
    """One translated sentence, where it stands (``run``: in which unit of an HTML text),
    with its n-best list, glossary terms, confidence and word probabilities when the engine gave
    them (``tgt_tokenizer`` spells the pieces), and its word alignment when asked for."""
    return SentenceOut(
        start=segment.start,
        end=segment.end,
        run=run,
        source=segment.text,
        text=result.text,
        score=result.score,
        finished=result.finished,
        nbest=candidates_out(result),
        alignment=alignment,
        terms=terms_out(glossary, segment.text, result.text),
        copied=[CopiedOut.model_validate(span, from_attributes=True) for span in result.copied],
        **{
            **quality_out(result, tgt_tokenizer),
            **({"likely_wrong": True} if result.short else {}),
        },
        short=result.short,
    )


def document_out(
    document: DocumentTranslation[Translation],
    glossary: Glossary | None = None,
    tgt_tokenizer: Tokenizer | None = None,
    alignments: Sequence[list[int] | None] | None = None,
) -> TranslationOut:
    """A translated text: assembled, with its sentences (and their word alignments when
    given); one sentence keeps its n-best list."""
    given = alignments or [None] * len(document.sentences)
    sentences = [
        sentence_out(segment, result, glossary, tgt_tokenizer, None, alignment)
        for segment, result, alignment in zip(
            document.segments, document.sentences, given, strict=True
        )
    ]
    return text_out(document.source, document.text, sentences, keep_nbest=True)


def text_out(
    source: str, text: str, sentences: list[SentenceOut], keep_nbest: bool
) -> TranslationOut:
    """A translated text from its sentences: their mean score, length-weighted confidence and
    flags; the n-best list is the one sentence's (``keep_nbest`` and a text of one sentence),
    else one candidate, ``text``."""
    confidence = document_confidence(
        [s.confidence for s in sentences], [s.end - s.start for s in sentences]
    )
    score = sum(s.score for s in sentences) / max(1, len(sentences))
    finished = all(s.finished for s in sentences)
    if keep_nbest and len(sentences) == 1:
        nbest = sentences[0].nbest
    else:
        best = [s.nbest[0] for s in sentences if s.nbest]
        nbest = [
            CandidateOut(
                text=text,
                score=score,
                log_prob=sum(c.log_prob for c in best),
                num_tokens=sum(c.num_tokens for c in best),
                finished=finished,
            )
        ]
    return TranslationOut(
        source=source,
        text=text,
        score=score,
        finished=finished,
        nbest=nbest,
        sentences=sentences,
        kept=left_as_written(source, [(s.start, s.end) for s in sentences])
        if all(s.run is None for s in sentences)
        else [],
        confidence=None if confidence is None else round(confidence, 4),
        likely_wrong=any(bool(s.likely_wrong) for s in sentences)
        if confidence is not None or any(s.short for s in sentences)
        else None,
    )


def rounded(values: Any, digits: int = 4) -> Any:
    """Nested lists of floats rounded (attention JSON is mostly digits)."""
    if isinstance(values, list):
        return [rounded(v, digits) for v in values]
    return round(float(values), digits)


def attention_out(view: AttentionView, model: str, elapsed_ms: float) -> AttentionResponse:
    return AttentionResponse(
        source=view.source,
        text=view.text,
        score=view.score,
        src_tokens=view.src_tokens,
        tgt_tokens=view.tgt_tokens,
        num_layers=view.num_layers,
        num_heads=view.num_heads,
        cross_attention=rounded(view.cross_attention),
        cosine_similarity=rounded(view.cosine_similarity),
        note=view.note,
        model=model,
        elapsed_ms=elapsed_ms,
    )
