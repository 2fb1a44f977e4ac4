"""The HTTP API's request and response bodies, with their limits (pydantic).

Every request model forbids unknown fields and uses strict types (``"4"`` is not a beam size), so
a client's mistake is a 422 naming the field, never a silently different request. The limits
(:mod:`anuvad.server.limits`) bound the work one request can ask for; the server answers
anything beyond them with a 4xx and goes on serving.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from annotated_types import Interval
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from anuvad.decode_config import setting, settings_spec
from anuvad.server.limits import (
    MAX_BEAM_SIZE,
    MAX_GLOSSARY_TERMS,
    MAX_REQUEST_CHARS,
    MAX_SENTENCE_CHARS,
    MAX_TERM_CHARS,
    MAX_TEXT_CHARS,
    MAX_TEXTS,
)

Decoding = Literal["greedy", "beam"]
Digits = Literal["latin", "devanagari"]


def _whole_number(value: Any) -> Any:
    """``3.0`` as ``3``: JSON Schema counts a number without a fraction as an integer, so a
    request the published schema allows is not refused. Strings and ``3.5`` stay errors."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


WHOLE = BeforeValidator(_whole_number)
WholeNumber = Annotated[int, WHOLE]


def text_schema(max_chars: int) -> dict[str, Any]:
    """The published schema of one text: what the validators below enforce (not blank, at most
    ``max_chars`` characters), so that a schema-valid text is never refused."""
    return {"type": "string", "minLength": 1, "maxLength": max_chars, "pattern": NOT_BLANK}


class StrictRequest(BaseModel):
    """A request body: unknown fields and loosely typed values are refused (422)."""

    model_config = ConfigDict(extra="forbid", strict=True)


# A text needs one character that is white space neither to JSON Schema (ECMA-262's \s) nor to
# Python (str.strip also removes the separators \x1c-\x1f and \x85, so a text of those has no
# sentence to translate: issue 33). The schema publishes this pattern and the server checks it.
NOT_BLANK = (
    r"[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    r"\u001c-\u001f\u0085]"
)


def check_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    if not re.search(NOT_BLANK, text):
        raise ValueError("text is empty; give at least one non-space character")
    if len(text) > limit:
        raise ValueError(
            f"text has {len(text)} characters; the limit is {limit} per text "
            f"(send a longer document in several parts)"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. the JSON escape "\ud800"
        raise ValueError(
            f"text is not valid Unicode: {exc.reason} at character {exc.start}"
        ) from None
    return text


def _setting_range(name: str, cap: int | None = None) -> Any:
    """The range of the search setting ``name`` as declared in :class:`DecodeConfig`, capped
    at the server's ``cap`` (a work budget) when one is given."""
    spec = setting(name)
    high = spec.maximum if cap is None else min(cap, spec.maximum or cap)
    return Interval(ge=spec.minimum, le=high)


def _setting_field(name: str) -> Any:
    """A request field for the search setting ``name``: null (the served model's own value,
    ``GET /models``) by default, described as the setting is declared."""
    return Field(None, description=f"{setting(name).help}; null: the model's own")


class DecodeSettings(StrictRequest):
    """How to search: greedy, or beam search with ``beam_size`` hypotheses. Every search field
    is a :class:`DecodeConfig` setting (help and range from its declaration; its ``api`` flag
    says it belongs here, which a test checks) and defaults to the served model's value."""

    decoding: Decoding = Field("beam", description="'greedy' (beam size 1) or 'beam'")
    beam_size: Annotated[int, _setting_range("beam_size", MAX_BEAM_SIZE), WHOLE] | None = (
        _setting_field("beam_size")
    )
    length_penalty: Annotated[float, _setting_range("length_penalty")] | None = _setting_field(
        "length_penalty"
    )
    early_stopping: Literal["finished", "bound"] | None = _setting_field("early_stopping")
    no_repeat_ngram_size: Annotated[int, _setting_range("no_repeat_ngram_size"), WHOLE] | None = (
        _setting_field("no_repeat_ngram_size")
    )
    model: str | None = Field(
        None,
        max_length=200,
        description="the id of a served model (GET /models), e.g. for the other translation "
        "direction; null: the first served model",
    )

    def search_changes(self) -> dict[str, Any]:
        """The search settings this request sets, by their :class:`DecodeConfig` names (None:
        the model's own); greedy decoding is beam size 1."""
        changes = {f.name: getattr(self, f.name) for f, spec in settings_spec() if spec.api}
        if self.decoding == "greedy":
            changes["beam_size"] = 1
        return changes


class GlossaryTerm(StrictRequest):
    """A term and the translation the output must use where it occurs."""

    source: str = Field(
        description="the term (matched in any case, whole words, inflected: 'court' also "
        "matches 'Courts' and 'court's')",
        examples=["Supreme Court"],
        json_schema_extra=text_schema(MAX_TERM_CHARS),
    )
    target: str = Field(
        description="its required translation, used as given",
        examples=["सर्वोच्च न्यायालय"],
        json_schema_extra=text_schema(MAX_TERM_CHARS),
    )

    @field_validator("source", "target")
    @classmethod
    def _check_term(cls, value: str) -> str:
        return check_text(value, MAX_TERM_CHARS)


class TermsAndSearch(DecodeSettings):
    """The search settings and the glossary: what decides a sentence's translation, so that
    ``/attention`` shows the translation ``/translate`` gives for the same fields."""

    glossary: list[GlossaryTerm] | None = Field(
        None,
        max_length=MAX_GLOSSARY_TERMS,
        description=f"up to {MAX_GLOSSARY_TERMS} terms whose translations the output must use "
        "(torch engine; merged with the server's --glossary, this one winning for a shared "
        "term); each sentence's `terms` says which occurred and were used",
    )
    verbatim: bool = Field(
        True,
        description="copy numbers, links (URLs), e-mail addresses and the `keep` names into "
        "the translation exactly: the torch engine's search is made to write them "
        "(anuvad.inference.verbatim); each sentence's `copied` says what was found and whether "
        "it arrived; false: the model translates them like any other words",
    )
    digits: Digits = Field(
        "latin",
        description="the digits copied numbers are written in: 'latin' (0-9, as Hindi news "
        "mostly writes them) or 'devanagari' (०-९)",
    )
    keep: list[Annotated[str, Field(json_schema_extra=text_schema(MAX_TERM_CHARS))]] | None = Field(
        None,
        max_length=MAX_GLOSSARY_TERMS,
        description=f"up to {MAX_GLOSSARY_TERMS} names (or other strings) copied exactly "
        "wherever they occur in a sentence as whole words (case-sensitive), e.g. "
        "['Rohit Sharma']; with `verbatim`",
    )

    @field_validator("keep")
    @classmethod
    def _check_keep(cls, value: list[str] | None) -> list[str] | None:
        for i, name in enumerate(value or []):
            try:
                check_text(name, MAX_TERM_CHARS)
            except ValueError as exc:
                raise ValueError(f"{i}: {exc}") from None
        return value


Format = Literal["text", "html"]


class TranslateRequest(TermsAndSearch):
    """``POST /translate`` (and ``/translate/stream``): one text or a list of texts, translated
    with the same settings."""

    text: str | list[str] = Field(
        description=f"one text, or a list of up to {MAX_TEXTS} texts (each 1-{MAX_TEXT_CHARS} "
        f"characters, {MAX_REQUEST_CHARS} in all); a text may hold paragraphs and newlines",
        examples=["The weather is nice today. Let us go for a walk."],
        json_schema_extra={
            "anyOf": [
                text_schema(MAX_TEXT_CHARS),
                {
                    "type": "array",
                    "items": text_schema(MAX_TEXT_CHARS),
                    "minItems": 1,
                    "maxItems": MAX_TEXTS,
                },
            ]
        },
    )
    nbest: WholeNumber = Field(
        1,
        ge=1,
        le=MAX_BEAM_SIZE,
        description="candidates returned per sentence (and per text when it is one sentence); "
        "at most the beam size: a larger value returns every candidate the search keeps "
        "(1 for greedy search)",
    )
    split_sentences: bool = Field(
        True,
        description="split each text into sentences, translate them all and put the "
        "translations back in place (newlines and spacing kept); false: each text is translated "
        "as one sentence, and a text in which the sentence splitter finds several is refused "
        "(422 naming the text: the model would translate the first and stop)",
    )
    format: Format = Field(
        "text",
        description="'text': plain text; 'html': an HTML document or fragment whose text "
        "between the tags is translated and whose markup comes back byte for byte (nothing "
        'inside code, pre, script, style, or elements marked translate="no" or '
        'class="notranslate"; attribute values are kept as written); each translation\'s '
        "`text` is then the translated HTML, and its `sentences` are those of the text runs, "
        "each with its `run` (see SentenceOut)",
    )
    scores: bool = Field(
        True,
        description="each sentence's confidence, likely-wrong flag, word and token probabilities "
        "(from signals the search records, plus a reverse model's pass where the calibration "
        "uses one; false: ~1.3x the throughput, those fields null or empty)",
    )

    @field_validator("text")
    @classmethod
    def _check_texts(cls, value: str | list[str]) -> str | list[str]:
        if isinstance(value, str):
            return check_text(value)
        if not value:
            raise ValueError("the list of texts is empty; give at least one text")
        if len(value) > MAX_TEXTS:
            raise ValueError(
                f"{len(value)} texts in one request; the limit is {MAX_TEXTS} "
                f"(send several requests)"
            )
        for i, text in enumerate(value):
            try:
                check_text(text)
            except ValueError as exc:
                raise ValueError(f"text {i}: {exc}") from None
        total = sum(len(text) for text in value)
        if total > MAX_REQUEST_CHARS:
            raise ValueError(
                f"the texts have {total} characters in all; the limit is {MAX_REQUEST_CHARS} "
                f"per request (send several requests)"
            )
        return value

    def texts(self) -> list[str]:
        """The texts to translate, as a list."""
        return [self.text] if isinstance(self.text, str) else list(self.text)


class AttentionRequest(TermsAndSearch):
    """``POST /attention``: the attention of one sentence and its best translation: the
    translation ``POST /translate`` gives the sentence with the same search fields and
    glossary."""

    text: str = Field(
        description=f"one sentence (1-{MAX_SENTENCE_CHARS} characters)",
        examples=["The weather is nice today."],
        json_schema_extra=text_schema(MAX_SENTENCE_CHARS),
    )

    @field_validator("text")
    @classmethod
    def _check_one_text(cls, value: str) -> str:
        return check_text(value, MAX_SENTENCE_CHARS)


class CandidateOut(BaseModel):
    """One entry of an n-best list."""

    text: str
    score: float = Field(description="ranking score: log-probability / length penalty")
    log_prob: float = Field(description="sum of the token log-probabilities")
    num_tokens: int
    finished: bool = Field(description="false when the length limit cut the output")


class TermOut(BaseModel):
    """A glossary term that occurs in a sentence, and whether its translation was used."""

    source: str
    target: str
    used: bool = Field(
        description="the translation holds the target phrase as whole words (not glued into a "
        "longer word)"
    )


class CopiedOut(BaseModel):
    """A number, link, e-mail address or kept name of the sentence that the translation must
    copy, and what became of it."""

    kind: Literal["number", "url", "email", "name"]
    source: str = Field(description="as it is in the sentence")
    target: str = Field(description="what the translation must hold (a number in `digits`)")
    start: int = Field(description="offset in the sentence")
    end: int
    required: bool = Field(description="the search was made to write it (false: see `note`)")
    present: bool = Field(description="the translation holds `target` whole")
    note: str = Field("", description="why it was not required ('' when it was)")


class WordOut(BaseModel):
    """One output word and how probable the model found it."""

    text: str
    prob: float = Field(description="the model's probability of the word (its pieces' product)")
    start: int = Field(description="offset in the sentence's translation (-1: not found there)")
    end: int


class TokenOut(BaseModel):
    """One output piece (as the vocabulary spells it) and its probability."""

    piece: str
    prob: float


class SentenceOut(BaseModel):
    """One sentence of a text: where it stands in the text, and its translation."""

    start: int = Field(
        description="offset of the sentence's first character in the text (format 'html': in "
        "the text of its run)"
    )
    end: int = Field(description="offset just after its last character")
    run: int | None = Field(
        None,
        description="format 'html': which text run (the text between two tags, counted from 0 "
        "in document order, unescaped and stripped of surrounding white space) the sentence is "
        "in; `source` and `text` are then plain text; null for format 'text'",
    )
    source: str
    text: str
    score: float
    finished: bool
    nbest: list[CandidateOut]
    terms: list[TermOut] = Field(
        default_factory=list, description="the glossary terms that occur in this sentence"
    )
    copied: list[CopiedOut] = Field(
        default_factory=list,
        description="the numbers, links, e-mail addresses and kept names found in the sentence "
        "(request field `verbatim`), each with whether it reached the translation",
    )
    confidence: float | None = Field(
        None,
        description="calibrated probability that the translation is good (sentence chrF++ >= "
        "30 on the dev data the model was calibrated on); null when the model has no "
        "calibration or the engine is ctranslate2",
    )
    likely_wrong: bool | None = Field(
        None, description="confidence below the calibration's threshold; null without one"
    )
    words: list[WordOut] = Field(
        default_factory=list, description="the translation's words with their probabilities"
    )
    tokens: list[TokenOut] = Field(
        default_factory=list,
        description="every output piece with its probability (EOS last when the output ended)",
    )


class TranslationOut(BaseModel):
    """One translated text: the translation with the text's layout, and its sentences."""

    source: str
    text: str
    score: float = Field(description="the sentences' mean score")
    finished: bool = Field(description="false when the length limit cut a sentence")
    nbest: list[CandidateOut] = Field(
        description="the candidates when the text is one sentence; else the assembled text"
    )
    sentences: list[SentenceOut] = Field(description="the text's sentences, in order")
    confidence: float | None = Field(
        None,
        description="the sentences' confidences averaged, each weighted by its length in "
        "source characters (null without calibration)",
    )
    likely_wrong: bool | None = Field(
        None,
        description="some sentence is likely wrong (so a text with a high confidence can be "
        "flagged for one short sentence); null without calibration",
    )


class TranslateResponse(BaseModel):
    """The translations, in request order, and what it took."""

    translations: list[TranslationOut]
    model: str = Field(description="the id of the model that translated (GET /models)")
    detected_language: str | None = Field(
        None,
        description="the language the texts are written in, among the served models' source "
        "languages, told by their script (POST /detect); a request that names no model goes to "
        "a model that translates from it; null when the texts have no letters",
    )
    decoding: Decoding
    beam_size: int
    elapsed_ms: float = Field(description="server time for the whole request")


class AttentionResponse(BaseModel):
    """Cross-attention and the cosine-similarity view of one sentence."""

    source: str
    text: str
    score: float
    src_tokens: list[str]
    tgt_tokens: list[str]
    num_layers: int
    num_heads: int
    cross_attention: list[list[list[list[float]]]] = Field(
        description="[layer][head][target position][source position]; rows sum to 1"
    )
    cosine_similarity: list[list[float]] = Field(
        description="[target position][source position], decoder state vs encoder memory"
    )
    note: str = Field(
        "", description="what the view leaves out when the engine cannot give it all; '' = none"
    )
    model: str
    elapsed_ms: float


class ErrorResponse(BaseModel):
    """Every 4xx/5xx body: a readable message, and per-field details for validation errors."""

    error: str
    details: list[dict[str, Any]] = Field(default_factory=list)


# ------------------------------------------------------------------ POST /translate/stream lines


class StreamStart(BaseModel):
    """The first line: what the stream will hold."""

    event: Literal["start"] = "start"
    total: int = Field(description="sentences to translate (all texts together)")
    sentences: list[int] = Field(description="how many of them each text holds, in order")
    model: str = Field(description="the id of the model that translates")
    detected_language: str | None = Field(description="as in TranslateResponse")


class StreamSentence(BaseModel):
    """One sentence translated (in the order they finish: a long request is translated a
    model call at a time, and the sentences of one call arrive together, in order)."""

    event: Literal["sentence"] = "sentence"
    text: int = Field(description="which text of the request (0 for a single text)")
    sentence: int = Field(description="which sentence of that text (its index in `sentences`)")
    done: int = Field(description="sentences translated so far, this one included")
    total: int = Field(description="sentences to translate in all")
    result: SentenceOut


class StreamDone(BaseModel):
    """The last line of a stream that succeeded: the whole answer, as POST /translate gives."""

    event: Literal["done"] = "done"
    response: TranslateResponse


class StreamError(BaseModel):
    """The last line of a stream that failed after it began (before it began, the request is
    answered with the status and an ErrorResponse body, as POST /translate)."""

    event: Literal["error"] = "error"
    status: int = Field(description="the HTTP status the request would have had, e.g. 504")
    error: str


StreamEvent = StreamStart | StreamSentence | StreamDone | StreamError
