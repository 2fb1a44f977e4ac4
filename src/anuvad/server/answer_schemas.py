"""The HTTP API's answers (pydantic): a translation and its sentences (``POST /translate``),
the lines of ``POST /translate/stream``, the attention view, and the error body every 4xx/5xx
has. :mod:`anuvad.server.responses` makes them from the engines' results."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from anuvad.server.schemas import Decoding


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

    kind: Literal["number", "date", "url", "email", "name", "code"]
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
        description="format 'html': which unit the sentence is in (the text between two tags, "
        "or text runs joined by inline elements such as b or a; counted from 0 in document "
        "order, unescaped, white space as the page shows it, stripped); `source` and `text` "
        "are then plain text; null for format 'text'",
    )
    source: str
    text: str
    score: float
    finished: bool
    nbest: list[CandidateOut]
    alignment: list[int] | None = Field(
        None,
        description="request field `alignment`: for each word of `text` (split on white "
        "space), the index of the word of `source` it came from (the source word with most of "
        "its attention in the model's last decoder layer; about 4 in 5 right on NTREX-128); "
        "null when not asked for, or when the model's pieces do not split into the texts' words",
    )
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
        None,
        description="confidence below the calibration's threshold, or the translation is much "
        "shorter than its source (`short`); null without a calibration when it is not short",
    )
    short: bool = Field(
        False,
        description="the translation is under half as long as the language pair's "
        "translations of such a source are (a model that stopped early): likely wrong",
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
    kept: list[str] = Field(
        default_factory=list,
        description="parts of the text written in another script than the model's source "
        "language (a Hindi line in an English text), left as written: a model given them "
        "writes nonsense (format 'text'; each part once per place)",
    )
    confidence: float | None = Field(
        None,
        description="the sentences' confidences averaged, each weighted by its length in "
        "source characters (null without calibration)",
    )
    likely_wrong: bool | None = Field(
        None,
        description="some sentence is likely wrong (so a text with a high confidence can be "
        "flagged for one short sentence); null without calibration unless a sentence is "
        "`short`",
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
