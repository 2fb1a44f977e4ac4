"""What every engine returns: translations with n-best lists, and attention views for heatmaps.

Both engines (:mod:`anuvad.inference.translator`, :mod:`anuvad.inference.ct2.engine`) return
these types, so the CLI and the server never know which engine translated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do beyond plain translation. The server, ``GET /models`` and the web
    page read these instead of testing the engine's name.

    Attributes:
        glossary: terms the output must use (required phrases through the search).
        constraints: arbitrary output constraints (parsing's tree constraint).
        bound_stopping: ``early_stopping="bound"`` (the paper code's stopping rule).
        quality: word probabilities and a calibrated confidence per translation.
        full_attention: the attention view has every layer and head and the cosine similarities
            (False: one averaged head, no cosines).
        stops_between_steps: ``stop`` is asked between decoding steps (False: between batches
            only), so a request that gives up frees the model within one step.
        verbatim: numbers, links, e-mail addresses and marked names are carried through
            exactly (required phrases through the search: :mod:`anuvad.inference.verbatim`).
            False: the engine translates them like any other words and each result's
            ``copied`` only reports whether they arrived.
    """

    glossary: bool
    constraints: bool
    bound_stopping: bool
    quality: bool
    full_attention: bool
    stops_between_steps: bool
    verbatim: bool = False

    def names(self) -> list[str]:
        """The names of the capabilities the engine has, in declaration order."""
        return [name for name, value in vars(self).items() if value]


@dataclass
class WordScore:
    """One output word and the model's probability of it.

    Attributes:
        text: the word as it appears in the output.
        prob: the product of its pieces' probabilities under the model (0..1).
        start: offset of its first character in the output text (-1: not found there).
        end: offset just after it (-1: not found).
    """

    text: str
    prob: float
    start: int
    end: int


@dataclass
class Quality:
    """How sure the model is of one translation (:mod:`anuvad.inference.confidence`).

    Attributes:
        token_probs: per output token (EOS included when the output finished), its probability.
        words: the output's words with their probabilities.
        features: the sentence's confidence features (for calibration and inspection).
        confidence: calibrated P(sentence chrF++ >= 30); None when the model has no
            calibration (``anuvad calibrate`` writes one).
        likely_wrong: confidence below the calibration's threshold; None without calibration.
    """

    token_probs: list[float]
    words: list[WordScore]
    features: dict[str, float]
    confidence: float | None = None
    likely_wrong: bool | None = None


@dataclass(frozen=True)
class CopiedSpan:
    """A part of the source its translation must copy, and what became of it.

    Attributes:
        kind: "number" (with its currency or per cent sign), "date" (a number with its month),
            "url", "email", "name" (a marked name) or "code" (a format placeholder, "{name}").
        source: the span as it is in the source.
        target: what the output must hold (a number in the chosen digits; else ``source``).
        start: offset of its first character in the source sentence.
        end: offset just after it.
        required: the search was made to write it (False: see ``note``).
        present: the best output holds ``target`` whole (nothing glued on either side).
        note: why it was not required ("" when it was).
    """

    kind: str
    source: str
    target: str
    start: int
    end: int
    required: bool
    present: bool
    note: str = ""


@dataclass
class Candidate:
    """One entry of an n-best list.

    Attributes:
        text: detokenized output.
        token_ids: target ids without BOS/EOS.
        score: ranking score, log_prob / lp(Y) (Wu et al. 2016); greedy: log_prob.
        log_prob: sum of token log-probabilities (EOS included if produced).
        finished: EOS produced before the length limit.
        quality: word probabilities and confidence, when asked for (the best candidate only).
        signals: when quality was asked for, what the search recorded for each token (its
            log-probabilities and the entropies of its distributions, EOS included when
            produced); spares the teacher-forced pass. None: not recorded.
        as_written: the source given back as written (addresses, numbers and marks alone:
            :mod:`anuvad.inference.placeholders`): the model's output was not used, so its
            probabilities say nothing of this text.
    """

    text: str
    token_ids: list[int]
    score: float
    log_prob: float
    finished: bool
    quality: Quality | None = None
    signals: tuple[list[float], list[float]] | None = field(default=None, repr=False)
    as_written: bool = False


@dataclass
class Translation:
    """One translated sentence: its best output and the n-best list (best first, >= 1);
    ``quality`` when asked for and the engine gives it; ``copied``: with a
    :class:`~anuvad.inference.verbatim.Verbatim` policy, the source's numbers, links and marked
    names and whether each reached the output; ``short``: the output is much shorter than the
    pair's translations of such a source are, likely wrong
    (:mod:`anuvad.inference.length_check`); ``read``: the source as the model read it where
    that differs (its Hindi numbers in words as digits, :mod:`anuvad.inference.number_words`;
    its addresses behind placeholders, :mod:`anuvad.inference.placeholders`;
    ``token_ids`` are its translation's), "" where it is ``source``."""

    source: str
    text: str
    token_ids: list[int]
    score: float
    finished: bool
    nbest: list[Candidate]
    quality: Quality | None = None
    copied: list[CopiedSpan] = field(default_factory=list)
    short: bool = False
    read: str = ""


@dataclass
class AttentionView:
    """Attention of one sentence's best hypothesis, as plain lists (JSON-ready).

    Attributes:
        src_tokens: source pieces, including the final "</s>".
        tgt_tokens: output pieces, including "</s>" when the output finished.
        cross_attention: [layer][head][tgt_pos][src_pos], every row sums to 1.
        cosine_similarity: [tgt_pos][src_pos], decoder state vs encoder output (memory).
        note: what the view leaves out when an engine cannot give everything (e.g. the
            CTranslate2 engine: one averaged layer, no cosine similarities); "" = complete.
    """

    source: str
    text: str
    src_tokens: list[str]
    tgt_tokens: list[str]
    cross_attention: list[list[list[list[float]]]]
    cosine_similarity: list[list[float]]
    num_layers: int
    num_heads: int
    score: float
    note: str = ""


def relocate_words(words: Sequence[WordScore], text: str) -> None:
    """Point each word at its place in ``text`` after a repair changed the text around them
    (words in order; one not found gets -1)."""
    position = 0
    for word in words:
        found = text.find(word.text, position)
        if found < 0:
            word.start = word.end = -1
            continue
        word.start, word.end = found, found + len(word.text)
        position = word.end


def rewrite(result: Translation, change: Callable[[str], str]) -> None:
    """``change`` (a repair of the text) on ``result``'s text and n-best candidates, in place;
    each candidate's word scores point at their words again (:func:`relocate_words`)."""
    for candidate in result.nbest:
        before = candidate.text
        candidate.text = change(before)
        if candidate.quality is not None and candidate.text != before:
            relocate_words(candidate.quality.words, candidate.text)
    result.text = result.nbest[0].text if result.nbest else change(result.text)
