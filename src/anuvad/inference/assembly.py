"""Translations put back in the places of their sentences in a document.

:func:`assemble` writes each translation where :func:`anuvad.inference.documents.split_document`
found its sentence, and keeps everything between them as the source wrote it (spaces, newlines,
list markers, sentences kept as written); its repairs at a sentence's edges are the
continuation of a long sentence cut for the model, and a list marker's digits
(:mod:`anuvad.inference.markers`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from anuvad.inference.markers import marker_digits, written_digits

if TYPE_CHECKING:
    from anuvad.inference.documents import Segment

__all__ = ["assemble"]

# A source part that ends no sentence: in a comma, semicolon or colon, or a letter or mark (a
# long sentence cut for the model before a conjunction or at a space).
_ENDS_NO_SENTENCE = re.compile(r"(?:[,;:،]|[^\W\d_]|[\u0900-\u0963])[\"'”’)\]]*$")
# English words that are never names, which the model capitalises at a part's start.
_FUNCTION_WORDS = frozenset((
    "but", "and", "or", "so", "then", "the", "a", "an", "this", "that", "these", "those", "it",
    "its", "he", "his", "she", "her", "they", "their", "we", "our", "you", "your", "which",
    "who", "whom", "whose", "when", "where", "while", "because", "if", "as", "in", "on", "at",
    "for", "with", "from", "to", "of", "by", "after", "before", "however", "although", "though",
    "since", "until", "there", "here", "also", "even", "still", "yet", "not", "no", "all",
    "some", "many", "most",
))  # fmt: skip


_FIRST_WORD = re.compile(r"[A-Z][a-z]*(?![\w&'’-])")


def _continues(translation: str) -> str:
    """``translation`` of a part that continues a sentence, its first word in lower case where
    it is a function word the model capitalised ("But 5000 I …" → "but 5000 I …", "However,
    …" → "however, …"; not "A & B", a name)."""
    first = _FIRST_WORD.match(translation)
    if first is None or first.group().lower() not in _FUNCTION_WORDS:
        return translation
    if translation[first.end() : first.end() + 2] == " &":
        return translation
    return first.group().lower() + translation[first.end() :]


def assemble(
    text: str,
    segments: Sequence[Segment],
    translations: Sequence[str],
    digits_from: Sequence[str] | None = None,
) -> str:
    """Put ``translations`` in the places of ``segments`` in ``text``; everything between the
    segments (spaces, newlines, blank lines) is kept, and two sentences the source wrote
    with nothing between them ("came.Sita went.") get a space. The translation of a part that
    continues the sentence before it (a long sentence cut for the model: only spaces between
    them, and the part before ends in a comma or a word) does not begin with a capitalised
    function word ("… in Delhi, But 5000 I …" → "… in Delhi, but 5000 I …"). A numbered list
    marker takes the digits the translations write (``digits_from``, default ``translations``:
    :mod:`anuvad.inference.markers`).

    Raises:
        ValueError: different numbers of segments and translations.
    """
    if len(segments) != len(translations):
        raise ValueError(f"{len(segments)} segments but {len(translations)} translations")
    out, pos, digits = [], 0, written_digits(translations if digits_from is None else digits_from)
    for i, (segment, translation) in enumerate(zip(segments, translations, strict=True)):
        between = text[pos : segment.start]  # spaces alone: not a tab's cell, a kept sentence
        if i and between.strip(" ") == "" and _ENDS_NO_SENTENCE.search(segments[i - 1].text):
            translation = _continues(translation)
        between = marker_digits(between, digits)  # "१. " before an English item: "1. "
        out.append(between or (" " if i and translation else ""))
        out.append(translation)
        pos = segment.end
    out.append(text[pos:])
    return "".join(out)
