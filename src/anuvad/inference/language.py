"""Which of the served languages a text is written in, from its script (issue 34).

English and Hindi never share a script, so the script decides: the share of a text's words
written in each candidate language's script (:data:`anuvad.data.cleaning.SCRIPTS`; a word is
in the script most of its letters and marks are in) is that language's confidence. Words, not
letters: Hindi typed with English words in it ("कल meeting है।", "Boss ने कहा कि report कल तक
submit करो।") has more Latin letters than Devanagari ones, and was kept as written as "not
Hindi". Languages written in the same script (English and German) cannot be told apart this
way; they share the confidence and the first candidate wins, which :func:`detect` says by
returning every candidate with its share.

A text whose letters are mostly in another script than the model's source ("कप्तान ने 85 रन
बनाए" sent to English→Hindi came back as "Tayayay + 4.") is what :func:`wrong_script` catches.

The letters counted are those of the text's language, not of what it quotes: links and e-mail
addresses are left out (Latin letters in any text), and so, in a text that has letters of
another script and no plain lower-case Latin word ("the", "phone": English), are its Latin
words: names, brands, mentions and codes ("मैंने Samsung Galaxy S24 Ultra खरीदा।" and
"@user33 वाह!" are Hindi, though most of their letters are Latin; "He met राम at the station"
is English).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from anuvad.data.cleaning import SCRIPTS, script_ratio
from anuvad.inference.addresses import without_addresses
from anuvad.inference.codes import CODE

# A text is in a language's script when at least this share of its words is; below it the
# model would mostly see pieces it was not trained on.
SCRIPT_SHARE = 0.5


@dataclass(frozen=True)
class Detection:
    """One candidate language for a text and the share of its letters in that script (0..1)."""

    language: str
    confidence: float


def _is_latin(char: str) -> bool:
    return any(first <= ord(char) <= last for first, last in SCRIPTS["en"])


def language_letters(text: str) -> str:
    """The part of ``text`` whose letters tell its language (the module docstring): without
    addresses and format placeholders or tags written as text (:mod:`anuvad.inference.codes`),
    and, in a text with non-Latin letters and no plain lower-case Latin word,
    without its Latin words; the text without addresses when nothing else would be left."""
    text = CODE.sub(" ", without_addresses(text))  # "{{ user }}", "%s", "<b>": no language's
    if text.isascii() or not any(c.isalpha() and not _is_latin(c) for c in text):
        return text
    words = text.split()
    latin = [_latin_only(w) for w in words]
    if any(only and _plain(w) for w, only in zip(words, latin, strict=True)):
        return text  # English words among them: every letter counts
    kept = [w for w, only in zip(words, latin, strict=True) if not only]
    return " ".join(kept) if any(c.isalpha() for w in kept for c in w) else text


_PLAIN = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # letters, an apostrophe or hyphen inside
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def _latin_only(word: str) -> bool:
    """Whether ``word`` has letters, all Latin."""
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and all(_is_latin(c) for c in letters)


# What code and markup wrap a word in ("{{user}}", "%(name)s", "<b>", "`make`", "$HOME").
_CODE_EDGES = frozenset("{}<>%`$#@\\|~^*=")


def _plain(word: str) -> bool:
    """Whether ``word`` is a plain lower-case word of two letters or more ("phone", "it's"; not
    "Samsung", "@user33", "S24", a list's "a)", a template's "{{user}}": "नमस्ते {{user}}!"
    was read as English)."""
    core = _EDGES.sub("", word)
    plain = len(core) > 1 and bool(_PLAIN.fullmatch(core)) and core.islower()
    return plain and not _CODE_EDGES & set(word.replace(core, "", 1))


def script_share(text: str, lang: str) -> float:
    """The share of ``text``'s words (those with letters or marks) written in ``lang``'s
    script: a word is in the script most of its letters and marks are in (a tie counts); 1.0
    without such words or a known script."""
    words = [w for w in text.split() if any(unicodedata.category(c)[0] in "LM" for c in w)]
    if lang not in SCRIPTS or not words:
        return 1.0
    return sum(2 * script_ratio(word, lang) >= 1 for word in words) / len(words)


def detect(text: str, languages: Sequence[str]) -> list[Detection]:
    """The ``languages`` (codes such as "en", "hi") ranked by the share of ``text``'s words
    in their scripts (:func:`language_letters`, :func:`script_share`), best first (ties keep
    the given order). A text without letters gives every language confidence 0; a language of
    unknown script gets 0."""
    text = language_letters(text)
    letters = sum(char.isalpha() for char in text)
    found = [
        Detection(lang, script_share(text, lang) if letters and lang in SCRIPTS else 0.0)
        for lang in dict.fromkeys(languages)
    ]
    return sorted(found, key=lambda d: -d.confidence)


def wrong_script(text: str, language: str) -> bool:
    """Whether most of ``text``'s words are written in another script than ``language``'s
    (False for a text without letters or a language of unknown script)."""
    if language not in SCRIPTS or not any(char.isalpha() for char in text):
        return False
    letters = language_letters(text)
    return any(c.isalpha() for c in letters) and script_share(letters, language) < SCRIPT_SHARE


def foreign_script(phrase: str, lang: str) -> bool:
    """Whether ``phrase`` has letters and none of ``lang``'s script (a Latin "SC" for Hindi);
    False for a language of unknown script."""
    script = SCRIPTS.get(lang)
    letters = [ord(c) for c in phrase if c.isalpha()]
    return bool(script and letters) and not any(
        a <= code <= b for code in letters for a, b in script or ()
    )


__all__ = [
    "SCRIPT_SHARE",
    "Detection",
    "detect",
    "foreign_script",
    "language_letters",
    "script_share",
    "wrong_script",
]
