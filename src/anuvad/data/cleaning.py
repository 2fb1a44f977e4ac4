"""Text-level cleaning of training pairs: normalisation, quote artefacts, scripts, dev overlap.

:func:`clean_corpus` runs before tokenization, one corpus at a time, and counts every change and
every drop by reason in a :class:`CleaningReport`; the token-level rules (``too_long``,
``length_ratio``) follow in :func:`anuvad.data.corpora.filter_pairs`. The rules, in order:

1. ``csv_unquoted`` (a fix): a side wrapped in double quotes, as a CSV export leaves it
   (``"a ""b"" c"``), loses the wrapping quotes and has its doubled quotes halved.
2. ``normalized`` (a fix): :class:`TextNormalizer` changed a side.
3. ``empty`` (a drop): a side is blank.
4. ``script`` (a drop): less than ``min_script_ratio`` of a side's letters are in its language's
   script (Hindi text on the English side, romanised Hindi, mojibake).
5. ``dev_overlap`` (a drop): a side equals a dev-set sentence (:class:`DevIndex`).
6. ``duplicate`` (a drop): the same (source, target) pair was kept before, in this corpus or an
   earlier one.

Normalisation uses well-kept libraries rather than hand-written tables: the Indic NLP library's
Devanagari normalizer (nukta forms, danda variants "|" / "।", ZWJ/ZWNJ, chandrabindu and vowel-sign
variants) and sacremoses' port of Moses' ``normalize-punctuation.perl`` (quotes, dashes, spacing).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anuvad.config import CleaningConfig, DataConfig
from anuvad.data.corpora import ParallelText

__all__ = [
    "CLEAN_DROP_REASONS",
    "CLEAN_FIXES",
    "LATIN_DIGIT_RULES",
    "SCRIPTS",
    "CleaningReport",
    "DevIndex",
    "TextNormalizer",
    "clean_corpus",
    "normalizer_for",
    "overlap_key",
    "script_ratio",
    "source_normalizer",
    "unwrap_csv_quotes",
]

CLEAN_FIXES = ("csv_unquoted", "normalized")
CLEAN_DROP_REASONS = ("empty", "script", "dev_overlap", "duplicate")

# Unicode blocks of the scripts checked, as (first, last) code points.
_LATIN = ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF))
_DEVANAGARI = ((0x900, 0x97F), (0xA8E0, 0xA8FF), (0x1CD0, 0x1CFF))
SCRIPTS: dict[str, tuple[tuple[int, int], ...]] = {
    "en": _LATIN,
    "de": _LATIN,
    "fr": _LATIN,
    "es": _LATIN,
    "hi": _DEVANAGARI,
    "mr": _DEVANAGARI,
    "ne": _DEVANAGARI,
}
# Languages the Indic NLP library normalizes (the others get Moses punctuation normalisation).
_INDIC = frozenset({"hi", "mr", "ne", "bn", "gu", "pa", "or", "ta", "te", "kn", "ml", "as", "sa"})
_SPACES = re.compile(r"\s+")
# anuvad's own rules for Indic text, after the Indic NLP library's normalizer (patterns valid
# in Python and JavaScript: the browser runtime applies them too, anuvad.web.indic_rules): a
# double danda "॥" (or two dandas) is a danda (a model that rarely saw "॥" read "सीता बाज़ार
# गई ॥" as "City III"), and a danda between digits is the "|" it was typed as ("100|200": the
# library makes every "|" a danda).
_DIGIT = "[0-9\u0966-\u096f]"
INDIC_RULES: tuple[tuple[str, str], ...] = (
    ("\u0965", "\u0964"),
    ("\u0964{2,}", "\u0964"),  # a double danda typed as two ("||", "।।")
    (f"(?<={_DIGIT})\u0964(?={_DIGIT})", "|"),
)

# Digits of the Indic and Arabic scripts (and full-width ones) as ASCII digits in a language
# written in Latin letters: "Room ४०४" read "Room ⁇" to an English model and came out as noise.
# One rule per digit value, valid in Python and JavaScript (the browser applies them too).
_ZEROS = (0x660, 0x6F0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xFF10)
LATIN_DIGIT_RULES: tuple[tuple[str, str], ...] = tuple(
    ("[" + "".join(chr(zero + value) for zero in _ZEROS) + "]", str(value)) for value in range(10)
)


class TextNormalizer:
    """Normalises one language's text: NFC, then the language's normalizer, then spacing.

    Indic languages go through the Indic NLP library's normalizer (``remove_nuktas=False``: the
    nukta distinguishes words such as ज़रा / जरा); the others through sacremoses'
    ``MosesPunctNormalizer`` (Unicode punctuation replaced, control characters removed).
    Instances are cheap to share: use :func:`normalizer_for`.
    """

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self._normalize: Callable[[str], str]
        if lang in _INDIC:
            from indicnlp.normalize.indic_normalize import IndicNormalizerFactory

            indic = IndicNormalizerFactory().get_normalizer(lang, remove_nuktas=False)
            self._normalize = indic.normalize
        else:
            moses = moses_punct_normalizer()(
                lang=lang, pre_replace_unicode_punct=True, post_remove_control_chars=True
            )
            self._normalize = moses.normalize

    def __call__(self, text: str) -> str:
        """The normalised text (idempotent: normalising twice changes nothing more); Indic
        text then goes through :data:`INDIC_RULES`, text of a language written in Latin
        letters through :data:`LATIN_DIGIT_RULES`."""
        text = self._normalize(unicodedata.normalize("NFC", text))
        if self.lang in _INDIC:
            for pattern, replacement in INDIC_RULES:
                text = re.sub(pattern, replacement, text)
        elif SCRIPTS.get(self.lang) is _LATIN:
            for pattern, replacement in LATIN_DIGIT_RULES:
                text = re.sub(pattern, replacement, text)
        return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


@functools.cache
def moses_punct_normalizer() -> type[Any]:
    """sacremoses' ``MosesPunctNormalizer`` class, read from its own module alone.

    ``from sacremoses import MosesPunctNormalizer`` runs the package's ``__init__``, which also
    imports its tokenizer and truecaser and compiles their hundreds of Unicode patterns: 0.9 s
    of a 5 s ``echo hello | anuvad translate`` on 2 busy cores (issue 40, item 8), none of it
    needed here. ``sacremoses/normalize.py`` itself imports only ``re``, ``regex`` and
    ``itertools`` (24 ms). Where the package is not a plain folder (a zip), the usual import.
    """
    import importlib.util

    spec = importlib.util.find_spec("sacremoses")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(folders[0]) / "normalize.py" if folders else None
    if path is None or not path.is_file():
        from sacremoses import MosesPunctNormalizer

        return MosesPunctNormalizer  # type: ignore[no-any-return]
    module_spec = importlib.util.spec_from_file_location("anuvad_sacremoses_normalize", path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module.MosesPunctNormalizer  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=16)
def normalizer_for(lang: str) -> TextNormalizer:
    """The shared :class:`TextNormalizer` of ``lang`` (an ISO 639-1 code such as "hi")."""
    return TextNormalizer(lang)


def source_normalizer(data: DataConfig) -> Callable[[str], str]:
    """What a source sentence goes through before tokenization when translating with a model
    trained on ``data`` (its normalizer when ``data.clean.normalize``, else ``str.strip``)."""
    if data.clean.normalize:
        return normalizer_for(data.src_lang)
    return str.strip


def unwrap_csv_quotes(text: str) -> str:
    """``"a ""b"" c"`` → ``a "b" c``; anything not wrapped in double quotes is returned as is."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1].replace('""', '"').strip()
    return text


def script_ratio(text: str, lang: str) -> float:
    """The share of ``text``'s letters in ``lang``'s script; 1.0 without letters or known script."""
    blocks = SCRIPTS.get(lang)
    if blocks is None:
        return 1.0
    letters = 0
    inside = 0
    for char in text:
        if not unicodedata.category(char).startswith(("L", "M")):
            continue
        letters += 1
        code = ord(char)
        if any(first <= code <= last for first, last in blocks):
            inside += 1
    return inside / letters if letters else 1.0


_SENTENCE_END = re.compile(r"(?<=[.!?।॥])\s+")
_EDGE_PUNCT = " \t\"'“”‘’«».,;:!?।॥()[]-–—"


def overlap_key(text: str) -> str:
    """Case, spacing and surrounding punctuation do not count when comparing with dev sets."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text).casefold()).strip(_EDGE_PUNCT)


class DevIndex:
    """The sentences of the dev/test sets that training must not contain.

    Every dev segment counts whole and, for paragraph-level sets such as WMT24, split after
    sentence-final punctuation; case, spacing and surrounding punctuation are ignored. Keys
    shorter than ``min_chars`` characters are not indexed (a training entry "Yes." is not a leak
    of a dev sentence "Yes.").
    """

    def __init__(self, min_chars: int = 4) -> None:
        self.min_chars = min_chars
        self.src: set[str] = set()
        self.tgt: set[str] = set()

    def add(self, src: Iterable[str], tgt: Iterable[str]) -> None:
        """Index dev source and target segments."""
        for side, texts in ((self.src, src), (self.tgt, tgt)):
            for text in texts:
                for piece in (text, *_SENTENCE_END.split(text)):
                    key = overlap_key(piece)
                    if len(key) >= self.min_chars:
                        side.add(key)

    def overlaps(self, src: str, tgt: str) -> bool:
        """Whether either side of a training pair is a dev sentence."""
        return overlap_key(src) in self.src or overlap_key(tgt) in self.tgt


@dataclass
class CleaningReport:
    """What :func:`clean_corpus` changed and dropped in one corpus.

    ``sum(dropped.values()) == total - kept``; ``fixed`` counts pairs changed but kept or dropped
    later (a pair can be both unquoted and normalised).
    """

    total: int = 0
    kept: int = 0
    fixed: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLEAN_FIXES, 0))
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CLEAN_DROP_REASONS, 0))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for ``report.json``."""
        return {
            "total": self.total,
            "kept": self.kept,
            "fixed": dict(self.fixed),
            "dropped": dict(self.dropped),
        }


def clean_corpus(
    text: ParallelText,
    config: CleaningConfig,
    src_lang: str,
    tgt_lang: str,
    dev: DevIndex | None,
    seen: set[tuple[str, str]] | None,
) -> tuple[ParallelText, CleaningReport]:
    """Apply the text-level rules of the module docstring to one training corpus.

    Args:
        text: the corpus as read.
        config: which rules run (``normalize``, ``unwrap_csv_quotes``, ``min_script_ratio``).
        src_lang: the source language code (picks the normalizer and script).
        tgt_lang: the target language code.
        dev: dev sentences to drop (``None``: no dev-overlap check).
        seen: pairs kept so far across corpora, updated in place (``None``: no de-duplication).

    Returns:
        The kept pairs, in file order, and the report.
    """
    report = CleaningReport(total=len(text))
    norm_src = normalizer_for(src_lang) if config.normalize else None
    norm_tgt = normalizer_for(tgt_lang) if config.normalize else None
    src_out: list[str] = []
    tgt_out: list[str] = []
    for src, tgt in zip(text.src, text.tgt, strict=True):
        if config.unwrap_csv_quotes:
            new_src, new_tgt = unwrap_csv_quotes(src), unwrap_csv_quotes(tgt)
            if (new_src, new_tgt) != (src, tgt):
                report.fixed["csv_unquoted"] += 1
                src, tgt = new_src, new_tgt
        if norm_src is not None and norm_tgt is not None:
            new_src, new_tgt = norm_src(src), norm_tgt(tgt)
            if (new_src, new_tgt) != (src, tgt):
                report.fixed["normalized"] += 1
                src, tgt = new_src, new_tgt
        if not src or not tgt:
            reason = "empty"
        elif config.min_script_ratio > 0 and (
            script_ratio(src, src_lang) < config.min_script_ratio
            or script_ratio(tgt, tgt_lang) < config.min_script_ratio
        ):
            reason = "script"
        elif dev is not None and dev.overlaps(src, tgt):
            reason = "dev_overlap"
        elif seen is not None and (src, tgt) in seen:
            reason = "duplicate"
        else:
            if seen is not None:
                seen.add((src, tgt))
            src_out.append(src)
            tgt_out.append(tgt)
            continue
        report.dropped[reason] += 1
    report.kept = len(src_out)
    cleaned = ParallelText(text.name, text.src_path, text.tgt_path, src_out, tgt_out)
    return cleaned, report
