"""Word-level confidence candidates for ``bench/confidence_signals.py``: a bilingual lexicon's
coverage of the source and the output (``lexicon_*``), and the share of names and numbers in
the source (``names_*``). Words are compared by crude stems (:func:`key`)."""

from __future__ import annotations

import itertools
import math
import unicodedata
from pathlib import Path

MIN_WORD = 3


def key(word: str) -> str:
    """A word reduced to its first 5 characters (4 in Indic scripts): a crude stem."""
    word = word.casefold()
    return word[:4] if "\u0900" <= word[0] <= "\u0dff" else word[:5]


def words(text: str, shortest: int = MIN_WORD) -> list[str]:
    """The text's words, letters with their combining signs (Python's ``\\w`` leaves out the
    vowel signs of Indic scripts: "किताबें" would fall apart into "क", "त", "ब")."""
    spaced = "".join(c if unicodedata.category(c)[0] in "LM" else " " for c in text)
    return [w.casefold() for w in spaced.split() if len(w) >= shortest]


def prefixes(text: str) -> set[str]:
    """Every 2- to 5-character beginning of the text's words: a lexicon word's key matches a
    word it begins ("घर" matches "घरों")."""
    return {w[:n] for w in words(text, 2) for n in range(2, 6)}


def read_lexicon(path: Path, reversed_: bool) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(source key -> target keys, target key -> source keys) from a two-column TSV of single
    source words and their translations."""
    forward: dict[str, set[str]] = {}
    backward: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        columns = line.split("\t")
        if len(columns) < 2:
            continue
        src, tgt = (columns[1], columns[0]) if reversed_ else (columns[0], columns[1])
        src_words = words(src, 2)
        if len(src_words) != 1:  # single source words only
            continue
        for t in words(tgt, 2):
            forward.setdefault(key(src_words[0]), set()).add(key(t))
            backward.setdefault(key(t), set()).add(key(src_words[0]))
    return forward, backward


def lexicon_features(
    source: str, output: str, forward: dict[str, set[str]], backward: dict[str, set[str]]
) -> dict[str, float]:
    """``lexicon_recall`` (source words the lexicon knows whose translation begins an output
    word) and ``lexicon_precision`` (output words the lexicon knows that translate a source
    word); each absent when no word on its side is known."""
    known = [forward[k] for k in map(key, words(source)) if k in forward]
    known_out = [backward[k] for k in map(key, words(output)) if k in backward]
    found = {}
    if known:  # a sentence without known words lacks the feature (the fit uses its mean)
        out = prefixes(output)
        found["lexicon_recall"] = sum(1 for t in known if t & out) / len(known)
    if known_out:
        src = prefixes(source)
        found["lexicon_precision"] = sum(1 for t in known_out if t & src) / len(known_out)
    return found


def name_features(source: str) -> dict[str, float]:
    """The ``names_*`` candidates of one source."""
    tokens = source.split()
    later = [w.strip("\"'(“‘") for w in tokens[1:]]
    capital = sum(1 for w in later if w[:1].isupper())
    digits = sum(1 for w in tokens if any(c.isdigit() for c in w))
    return {
        "names_capital_share": capital / max(1, len(later)),
        "names_digit_share": digits / max(1, len(tokens)),
    }


def read_counts(paths: list[Path]) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Word and word-pair counts of monolingual text files (plain or ``.gz``, one sentence a
    line): what the language writes, known without the translation model."""
    import gzip
    from collections import Counter

    unigrams: Counter[str] = Counter()
    bigrams: Counter[tuple[str, str]] = Counter()
    for path in paths:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                found = words(line, 1)
                unigrams.update(found)
                bigrams.update(itertools.pairwise(found))
    return dict(unigrams), dict(bigrams)


def mono_features(
    text: str, side: str, counts: tuple[dict[str, int], dict[tuple[str, str], int]]
) -> dict[str, float]:
    """``mono_{side}_*``: how ordinary the text's words are in monolingual text of its language:
    the share of its words never seen there (the invented words of a garbled output, the rare
    names of a hard source), their mean and lowest log count, and the share of its word pairs
    never seen (a fluency proxy)."""
    unigrams, bigrams = counts
    found = words(text, 1)
    if not found:
        return {}
    logs = [math.log1p(unigrams.get(w, 0)) for w in found]
    pairs = list(itertools.pairwise(found))
    return {
        f"mono_{side}_unseen": sum(1 for w in found if w not in unigrams) / len(found),
        f"mono_{side}_log_mean": sum(logs) / len(logs),
        f"mono_{side}_log_min": min(logs),
        f"mono_{side}_pairs_unseen": (
            sum(1 for p in pairs if p not in bigrams) / len(pairs) if pairs else 0.0
        ),
    }
