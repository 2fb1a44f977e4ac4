"""The HTTP API's request bodies, with their limits (pydantic); the answers are in
:mod:`anuvad.server.answer_schemas`, ``GET /models``' and ``/detect``'s in
:mod:`anuvad.server.model_schemas`.

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

from anuvad.decode_config import DecodeConfig, setting, settings_spec
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


def is_blank(text: str) -> bool:
    """Whether ``text`` has no character to translate (empty, or spaces only)."""
    return re.search(NOT_BLANK, text) is None


TERM_ADVICE = "a term or a name to keep is a few words, not a passage"


def check_text(
    text: str, limit: int = MAX_TEXT_CHARS, advice: str = "send a longer document in several parts"
) -> str:
    """``text`` if it is not blank, within ``limit`` characters (else the error ends with
    ``advice``) and valid Unicode."""
    if is_blank(text):
        raise ValueError("text is empty; give at least one non-space character")
    if len(text) > limit:
        raise ValueError(f"text has {len(text)} characters; the limit is {limit} ({advice})")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate, e.g. the JSON escape "\ud800"
        raise ValueError(
            f"text is not valid Unicode: {exc.reason} at character {exc.start}"
        ) from None
    return text


def check_texts(value: str | list[str], blank_items: bool = False) -> str | list[str]:
    """One text or a list of texts within the limits :func:`texts_schema` publishes, and the
    characters of all together within :data:`MAX_REQUEST_CHARS` (which it cannot state).

    Args:
        blank_items: a list may hold empty or blank texts beside at least one with text
            (LibreTranslate's ``q``: each comes back as it was).
    """
    if isinstance(value, str):
        return check_text(value)
    if not value:
        raise ValueError("the list of texts is empty; give at least one text")
    if len(value) > MAX_TEXTS:
        raise ValueError(
            f"{len(value)} texts in one request; the limit is {MAX_TEXTS} (send several requests)"
        )
    if blank_items and all(is_blank(text) for text in value):
        raise ValueError("every text is empty; give at least one non-space character")
    for i, text in enumerate(value):
        if blank_items and is_blank(text) and len(text) <= MAX_TEXT_CHARS:
            continue
        try:
            check_text(text)
        except ValueError as exc:
            raise ValueError(f"text[{i}]: {exc}") from None
    total = sum(len(text) for text in value)
    if total > MAX_REQUEST_CHARS:
        raise ValueError(
            f"the texts have {total} characters in all; the limit is {MAX_REQUEST_CHARS} "
            f"per request (send several requests)"
        )
    return value


def texts_schema(blank_items: bool = False) -> dict[str, Any]:
    """The published schema of one text or a list of texts (what :func:`check_texts` checks,
    but the characters of all texts together, and with ``blank_items`` that one item has text)."""
    one = text_schema(MAX_TEXT_CHARS)
    item = {"type": "string", "maxLength": MAX_TEXT_CHARS} if blank_items else one
    return {"anyOf": [one, {"type": "array", "items": item, "minItems": 1, "maxItems": MAX_TEXTS}]}


def _setting_range(name: str, cap: int | None = None) -> Any:
    """The range of the search setting ``name`` as declared in :class:`DecodeConfig`, capped
    at the server's ``cap`` (a work budget) when one is given."""
    spec = setting(name)
    high = spec.maximum if cap is None else min(cap, spec.maximum or cap)
    return Interval(ge=spec.minimum, le=high)


def _setting_field(name: str) -> Any:
    """A request field for the search setting ``name``: null (the served model's own value,
    ``GET /models``) by default, described as the setting is declared, with the usual default
    as its example (what ``/docs`` fills in, rather than a value at the limits)."""
    usual = getattr(DecodeConfig(), name)
    return Field(None, description=f"{setting(name).help}; null: the model's own", examples=[usual])


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
    early_stopping: Literal["finished", "bound", "heuristic"] | None = _setting_field(
        "early_stopping"
    )
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
        return check_text(value, MAX_TERM_CHARS, TERM_ADVICE)


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
        "it arrived; emoji and other symbols the vocabulary cannot spell are carried after the "
        "search (both engines); false: the model translates them like any other words",
    )
    digits: Digits = Field(
        "latin",
        description="the digits copied numbers are written in: 'latin' (0-9, as Hindi news "
        "mostly writes them) or 'devanagari' (०-९; a translation into a language of another "
        "script keeps Latin digits)",
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
                check_text(name, MAX_TERM_CHARS, TERM_ADVICE)
            except ValueError as exc:
                raise ValueError(f"{i}: {exc}") from None
        return value


Format = Literal["text", "html"]
Names = Literal["off", "model"]


class TranslateRequest(TermsAndSearch):
    """``POST /translate`` (and ``/translate/stream``): one text or a list of texts, translated
    with the same settings."""

    text: str | list[str] = Field(
        description=f"one text, or a list of up to {MAX_TEXTS} texts (each at most "
        f"{MAX_TEXT_CHARS} characters, {MAX_REQUEST_CHARS} in all); a text may hold paragraphs "
        "and newlines; an empty or blank text in a list (an empty cell of a column) comes back "
        "as it was, with no sentences",
        examples=["The weather is nice today. Let us go for a walk."],
        json_schema_extra=texts_schema(blank_items=True),
    )
    nbest: WholeNumber = Field(
        1,
        ge=1,
        le=MAX_BEAM_SIZE,
        description="candidates returned per sentence (and per text when it is one sentence); "
        "at most the beam size: a larger value returns every candidate the search keeps "
        "(1 for greedy search); distinct texts only, so fewer when the search's candidates read "
        "alike once copied numbers and punctuation are mended",
    )
    split_sentences: bool = Field(
        True,
        description="split each text into sentences, translate them all and put the "
        "translations back in place (newlines and spacing kept); false: each text is translated "
        "as one sentence, and a text in which the sentence splitter finds several is refused "
        "(422 naming the text: the model would translate the first and stop)",
    )
    names: Names = Field(
        "off",
        description="'model': a name the model cannot translate (it left it out or replaced "
        "it) is written in the model's own Devanagari spelling: the sentence is translated "
        "again with the name required ('Rohit Sharma' -> 'रोहित शर्मा'); English->Hindi models "
        "only, not on /translate/stream; 'off': as the model translates",
    )
    format: Format = Field(
        "text",
        description="'text': plain text; 'html': an HTML document or fragment whose text "
        "between the tags is translated and whose markup comes back byte for byte (nothing "
        'inside code, pre, script, style, or elements marked translate="no" or '
        'class="notranslate"; attribute values are kept as written; text joined by inline '
        "elements such as b, i, a, span is translated as one text and each element is placed "
        "around the words the model's attention aligns to its words); each translation's "
        "`text` is then the translated HTML, and its `sentences` are those of its units, each "
        "with its `run` (see SentenceOut)",
    )
    alignment: bool = Field(
        False,
        description="each sentence's word alignment (`alignment` in SentenceOut): for each word "
        "of its translation (what white space separates), the source word it came from, read "
        "from the model's cross-attention; for placing your own markup or highlighting. Not on "
        "/translate/stream",
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
        return check_texts(value, blank_items=True)

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
        return check_text(value, MAX_SENTENCE_CHARS, "the attention view is of one sentence")
