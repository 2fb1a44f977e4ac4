"""Where a required phrase may begin and must end, over target pieces and over output text.

A glossary phrase is in an output only as a whole word: "भारतीय रेलमार्ग" holds the pieces of
"भारतीय रेल" but not the term (issue 34, item 3), and "2500" holds "250" but not the number. A
:class:`Boundary` says which pieces may follow a phrase's last piece:

* ``WORD`` (glossary terms, kept names): a piece that starts a new word (SentencePiece's "▁"),
  punctuation, or EOS; a letter, mark or digit glued on (``रेल`` + ``मार्ग``) is not.
* ``NUMBER``: anything but a digit, a combining mark (``2`` + ``ंड``), or a separator followed
  by a digit (``250`` + ``0``, ``3`` + ``.5``); a letter may follow (Hindi writes ordinals as
  ``12वीं``). A bare ``.``, ``,``
  or ``:`` passes: the piece after it still may not be a digit.
* ``CODE``: a number inside a name or code of the source (``SS19``, ``HER2``, ``G20``): as
  ``NUMBER`` on the right, and it may follow a letter (``जी20``).
* ``LINK`` (URLs, e-mail addresses): a piece that starts a new word, or EOS; closing punctuation
  passes (``https://a.in`` + ``.`` + ``▁``), anything else glued on would change the address.
* ``NONE``: the tokens alone (phrases given as bare ids).

SentencePiece splits digits into single pieces and puts the word-start mark on a piece of its
own ("250" → ``▁ 2 5 0``; "(250)" → ``▁( 2 5 0 )``), so a number may also begin after a piece
that ends in an opening bracket or quote, a currency sign, a sign, a dash or a slash
(:attr:`BoundaryTable.number_starts`).

The same rules on text (:func:`holds`) decide whether an output *uses* a term or *kept* a number,
so the search's guarantee and the report agree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from anuvad.data.tokenizer import SPECIAL_IDS

if TYPE_CHECKING:
    from torch import Tensor

WORD_START = "▁"  # SentencePiece's mark on a piece that begins a word
SEPARATORS = ".,:"  # inside numbers: 3.5, 1,200, 10:30
CLOSERS = frozenset(".,;:!?)]}'\"”’।॥|")  # may end a sentence right after a link
JOINERS = ".,:/-–−"  # between the digits of one number: 3.5, 1,200, 10:30, 12/06, 2019-20
NUMBER_OPENERS = frozenset(WORD_START + "([{'\"“‘«$€£¥₹+-−–/#")  # a number may follow these


class Boundary(Enum):
    """Where a required phrase must end (see the module docstring)."""

    NONE = "none"
    WORD = "word"
    NUMBER = "number"
    CODE = "code"
    LINK = "link"


def is_word_char(char: str) -> bool:
    """A letter, a combining mark (Devanagari vowel signs, virama) or a digit, in any script."""
    return unicodedata.category(char)[0] in "LMN"


def is_digit(char: str) -> bool:
    """A decimal digit in any script (0-9, ०-९, ...)."""
    return unicodedata.category(char) == "Nd"


def is_mark(char: str) -> bool:
    """A combining mark (a Devanagari vowel sign, anusvara or virama): it belongs to the letter
    before it, so never follows a number ("2nd floor" came out "2ंड")."""
    return unicodedata.category(char).startswith("M")


def glues(piece: str, boundary: Boundary) -> bool:
    """Whether ``piece``, right after a phrase, would continue it rather than follow it.

    Args:
        piece: a SentencePiece piece ("▁" marks a word start).
        boundary: the phrase's boundary.
    """
    if boundary is Boundary.NONE or not piece or piece.startswith(WORD_START):
        return False
    if boundary is Boundary.WORD:
        return is_word_char(piece[0])
    if boundary in (Boundary.NUMBER, Boundary.CODE):
        return (
            is_digit(piece[0])
            or is_mark(piece[0])
            or (piece[0] in SEPARATORS and len(piece) > 1 and is_digit(piece[1]))
        )
    return not passes(piece, boundary)  # LINK: only closing punctuation may touch it


def passes(piece: str, boundary: Boundary) -> bool:
    """Whether the boundary check moves on to the piece after ``piece`` (a separator after a
    number, closing punctuation after a link: what follows them could still glue)."""
    if boundary in (Boundary.NUMBER, Boundary.CODE):
        return piece in tuple(SEPARATORS)
    if boundary is Boundary.LINK:
        return bool(piece) and all(c in CLOSERS for c in piece)
    return False


def starts_number_after(piece: str) -> bool:
    """Whether a number may begin right after ``piece``: it ends in a word start, an opening
    bracket or quote, a currency sign, a sign, a dash or a slash ("▁", "▁(", "$", "-"); not in a
    letter or digit ("जी" + "20"), a separator ("3." + "5") or other punctuation ("%" + "3")."""
    return bool(piece) and piece[-1] in NUMBER_OPENERS


def starts_code_after(piece: str) -> bool:
    """Whether a number of a code ("SS19") may begin right after ``piece``: after what a number
    may follow, or after a letter or mark ("एसएस" + "19"); not after a digit or separator."""
    return starts_number_after(piece) or (
        bool(piece) and is_word_char(piece[-1]) and not is_digit(piece[-1])
    )


def ends_sentence(piece: str) -> bool:
    """Whether a target piece ends a sentence (:attr:`BoundaryTable.final`)."""
    return piece.replace("▁", "").endswith(("।", "॥", "?", "!"))


@dataclass(frozen=True)
class BoundaryTable:
    """Every target piece classified once, for the search's masks.

    Attributes:
        glue: per boundary, (V,) bool: True where a piece would continue a phrase that just
            ended (forbidden right after it).
        passing: per boundary, (V,) bool: True where the check moves on to the next piece.
        number_starts: ids of the pieces a number may begin after (``▁`` among them); a
            number's first position accepts any of them.
        code_starts: the same for a number of a code (letters too).
        digits: (V,) bool: True where a piece holds a digit (any script).
        joiners: (V,) bool: True where a piece is one that joins digits into one number
            (``.``, ``,``, ``:``, ``/``, a hyphen or dash: "2019-20", "10:30").
        final: (V,) bool: True where a piece ends a sentence (ends in "।", "॥", "?" or "!";
            not a full stop, which also ends "Dr." and "3.5"): a search with a phrase still
            missing does not write one (the phrase came after the sentence's end: "… हूँ। राम
            ने।").
    """

    glue: dict[Boundary, Tensor]
    passing: dict[Boundary, Tensor]
    number_starts: frozenset[int]
    code_starts: frozenset[int]
    digits: Tensor
    joiners: Tensor
    final: Tensor

    @classmethod
    def from_pieces(cls, pieces: Sequence[str]) -> BoundaryTable:
        """Classify a vocabulary (``pieces[i]`` is id i's piece; special ids never glue, pass
        or start a number)."""
        # torch only here: reading a glossary (anuvad.inference.glossary, which checks terms with
        # :func:`holds`) must not import it (2.9 s of a cold ``anuvad translate``, issue 40).
        import torch

        special = set(SPECIAL_IDS)
        glue: dict[Boundary, Tensor] = {}
        passing: dict[Boundary, Tensor] = {}
        for boundary in Boundary:
            glue[boundary] = torch.tensor(
                [i not in special and glues(p, boundary) for i, p in enumerate(pieces)],
                dtype=torch.bool,
            )
            passing[boundary] = torch.tensor(
                [i not in special and passes(p, boundary) for i, p in enumerate(pieces)],
                dtype=torch.bool,
            )
        starts = frozenset(
            i for i, p in enumerate(pieces) if i not in special and starts_number_after(p)
        )
        codes = frozenset(
            i for i, p in enumerate(pieces) if i not in special and starts_code_after(p)
        )
        digits = torch.tensor(
            [i not in special and any(is_digit(c) for c in p) for i, p in enumerate(pieces)],
            dtype=torch.bool,
        )
        joiners = torch.tensor(
            [i not in special and p in tuple(JOINERS) for i, p in enumerate(pieces)],
            dtype=torch.bool,
        )
        final = torch.tensor(
            [i not in special and ends_sentence(p) for i, p in enumerate(pieces)],
            dtype=torch.bool,
        )
        return cls(glue, passing, starts, codes, digits, joiners, final)

    @property
    def vocab_size(self) -> int:
        """The number of pieces classified."""
        return int(self.glue[Boundary.NONE].numel())


def holds(text: str, phrase: str, boundary: Boundary) -> bool:
    """Whether ``text`` contains ``phrase`` whole, by the rules the search enforces (what
    touches it on the right, by ``boundary``) and the same rules on the left (a term does not
    start inside a word, a number not inside another number or after a letter).

    Args:
        text: an output sentence.
        phrase: the target phrase (a term's translation, a number, a link).
        boundary: its boundary; ``NONE``: a plain substring test.

    Returns:
        True when one occurrence has nothing glued to it on either side.
    """
    if not phrase:
        return True
    if boundary is Boundary.NONE:
        return phrase in text
    for match in re.finditer(re.escape(phrase), text):
        before, after = text[: match.start()], text[match.end() :]
        if _clear_left(before, boundary) and _clear_right(after, boundary):
            return True
    return False


def _clear_left(before: str, boundary: Boundary) -> bool:
    if not before:
        return True
    last = before[-1]
    if boundary is Boundary.LINK:
        return not is_word_char(last) and last not in "/@.:-_%+"
    if boundary in (Boundary.NUMBER, Boundary.CODE) and last in SEPARATORS + "-/":
        # not the tail of another number ("5" of "1800-5", "3" of "12/3"); "-5" is a sign
        return len(before) < 2 or not is_digit(before[-2])
    if boundary is Boundary.CODE:
        return not is_digit(last)
    return not is_word_char(last)


def _clear_right(after: str, boundary: Boundary) -> bool:
    if not after:
        return True
    if boundary in (Boundary.NUMBER, Boundary.CODE):
        if is_digit(after[0]) or is_mark(after[0]):
            return False
        return not (after[0] in SEPARATORS and len(after) > 1 and is_digit(after[1]))
    if boundary is Boundary.LINK:
        rest = after.lstrip("".join(CLOSERS))
        if rest != after:  # closing punctuation, then a space or the end
            return not rest or rest[0].isspace()
        return after[0].isspace() or not (is_word_char(after[0]) or after[0] in "/@_-#?=&%~+")
    return not is_word_char(after[0])
