"""Phrase boundaries: which pieces glue onto a phrase, pass, or may precede a number, and the same
rules on text (a term glued into a longer word, a number glued into a longer number, a link with
more address after it is not there)."""

from __future__ import annotations

import pytest

from anuvad.decoding.boundaries import Boundary, BoundaryTable, glues, holds, passes

WORD, NUMBER, LINK = Boundary.WORD, Boundary.NUMBER, Boundary.LINK


@pytest.mark.parametrize(
    ("piece", "boundary", "glued"),
    [
        ("मार्ग", WORD, True),  # रेल + मार्ग = रेलमार्ग
        ("ों", WORD, True),  # a vowel sign is part of the word
        ("▁मार्ग", WORD, False),  # a new word
        ("।", WORD, False),
        (",", WORD, False),
        ("0", NUMBER, True),  # 250 + 0 = 2500
        ("५", NUMBER, True),
        (".5", NUMBER, True),
        (".", NUMBER, False),  # a full stop after a number (passes: see below)
        ("वीं", NUMBER, False),  # 12वीं: Hindi ordinals are written on
        ("ंड", NUMBER, True),  # a combining mark belongs to a letter: "2nd" came out "2ंड"
        ("▁5", NUMBER, False),
        ("com", LINK, True),
        ("/", LINK, True),
        (".", LINK, False),  # passes
        ("▁पर", LINK, False),
        ("पर", LINK, True),
        ("x", Boundary.NONE, False),
    ],
)
def test_which_pieces_glue_onto_a_phrase(piece: str, boundary: Boundary, glued: bool) -> None:
    assert glues(piece, boundary) is glued


def test_separators_and_closing_punctuation_pass_the_check_on() -> None:
    assert passes(".", NUMBER) and passes(",", NUMBER) and not passes("-", NUMBER)
    assert passes(".", LINK) and passes(")।", LINK) and not passes(".c", LINK)
    assert not passes(".", WORD)


def test_the_table_classifies_every_piece_and_leaves_special_ids_alone() -> None:
    pieces = ["<pad>", "<unk>", "<s>", "</s>", "▁", "2", "▁(", "$", "ल", ".", "मार्ग", "▁कई"]
    table = BoundaryTable.from_pieces(pieces)
    assert table.vocab_size == len(pieces)
    assert table.glue[WORD].tolist() == [p in ("2", "ल", "मार्ग") for p in pieces]
    assert table.glue[NUMBER].tolist() == [p == "2" for p in pieces]
    assert table.passing[NUMBER].tolist() == [p == "." for p in pieces]
    # A number may start after a word start, a bracket or a currency sign; not after a letter,
    # a digit, a bare separator or a special id.
    assert {pieces[i] for i in table.number_starts} == {"▁", "▁(", "$"}
    assert {pieces[i] for i in table.code_starts} == {"▁", "▁(", "$", "ल", "मार्ग", "▁कई"}
    assert table.joiners.tolist() == [p == "." for p in pieces]
    assert table.digits.tolist() == [p == "2" for p in pieces]


@pytest.mark.parametrize(
    ("text", "phrase", "boundary", "found"),
    [
        ("भारतीय रेलमार्ग कई गाते हैं।", "भारतीय रेल", WORD, False),  # issue 34, item 3
        ("भारतीय रेल मार्ग कई गाते हैं।", "भारतीय रेल", WORD, True),
        ("यह भारतीय रेल।", "भारतीय रेल", WORD, True),
        ("उन्होंने रेलें देखीं", "रेल", WORD, False),  # a vowel sign glued on
        ("भारतीय रेलमार्ग और भारतीय रेल", "भारतीय रेल", WORD, True),  # the second occurrence
        ("2500 रन", "250", NUMBER, False),  # issue 34, item 4
        ("12500 रन", "250", NUMBER, False),
        ("250 ट्रेनें", "250", NUMBER, True),
        ("कुल 250.", "250", NUMBER, True),
        ("3.5 किलो", "3", NUMBER, False),
        ("12वीं रिपोर्ट", "12", NUMBER, True),
        ("2ंड मंजिल", "2", NUMBER, False),
        ("₹80 प्रति किलो", "80", NUMBER, True),
        ("(250)", "250", NUMBER, True),
        ("जी20 बैठक", "20", NUMBER, False),
        ("जी20 बैठक", "20", Boundary.CODE, True),  # a number of a code may follow a letter
        ("SS190", "19", Boundary.CODE, False),
        ("2020", "20", Boundary.CODE, False),
        ("1800-5 से", "5", NUMBER, False),  # the tail of another number (newcomer review)
        ("12/3 को", "3", NUMBER, False),
        ("तापमान -5 था", "5", NUMBER, True),  # a sign
        ("5-6 जीत", "5-6", NUMBER, True),
        ("https://indianrail.gov.in पर जाएँ", "https://indianrail.gov.in", LINK, True),
        ("देखें https://indianrail.gov.in.", "https://indianrail.gov.in", LINK, True),
        ("https://indianrail.gov.in.com", "https://indianrail.gov.in", LINK, False),
        ("https://indianrail.gov.in/prh", "https://indianrail.gov.in", LINK, False),
        ("xhttps://indianrail.gov.in", "https://indianrail.gov.in", LINK, False),
        ("रेलमार्ग", "रेल", Boundary.NONE, True),
    ],
)
def test_a_phrase_is_held_only_whole(
    text: str, phrase: str, boundary: Boundary, found: bool
) -> None:
    assert holds(text, phrase, boundary) is found
