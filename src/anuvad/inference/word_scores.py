"""Each word of a translation with its probability and its place in the text (what the page
shades and the API's ``words`` lists)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence

from anuvad.data.tokenizer import Tokenizer
from anuvad.inference.translation import WordScore

__all__ = ["word_scores"]


def word_scores(
    text: str, token_ids: Sequence[int], log_probs: Sequence[float], tokenizer: Tokenizer
) -> list[WordScore]:
    """The output's words, each with its probability (the product of its pieces' probabilities:
    the chance the model gave the whole word) and where it stands in ``text``.

    Words are SentencePiece words (a piece starting with "▁" opens one), found in ``text`` in
    order. A word the mending after the search changed ("बनाए." written "बनाए।", a quote
    dropped) is the next word of ``text`` whose letters and digits are the same: its text is
    then the text's. One found neither way keeps offsets -1.
    """
    pieces = tokenizer.id_to_piece(list(token_ids))
    groups: list[list[int]] = []
    for i, piece in enumerate(pieces):
        if not groups or piece.startswith("▁"):
            groups.append([])
        groups[-1].append(i)
    words: list[WordScore] = []
    cursor = 0
    for group in groups:
        surface = tokenizer.decode([token_ids[i] for i in group]).strip()
        if not surface:
            continue
        prob = math.exp(sum(log_probs[i] for i in group if i < len(log_probs)))
        at = text.find(surface, cursor)
        if at >= 0:
            cursor = at + len(surface)
            words.append(WordScore(surface, prob, at, cursor))
            continue
        mended = _NEXT_WORD.search(text, cursor)
        if mended is not None and _stem(mended.group()) == _stem(surface) != "":
            cursor = mended.end()
            words.append(WordScore(mended.group(), prob, mended.start(), cursor))
        else:
            words.append(WordScore(surface, prob, -1, -1))
    return words


_NEXT_WORD = re.compile(r"\S+")


def _stem(word: str) -> str:
    """A word's letters, marks and digits (what the mending never changes)."""
    return "".join(c for c in word if c.isalnum() or unicodedata.category(c).startswith("M"))
