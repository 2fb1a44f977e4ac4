"""Word alignment from attention: pieces grouped into the texts' words, each target word to the
source word holding most of its attention, and no alignment when the words do not match."""

from __future__ import annotations

from anuvad.inference.alignment import diagonal, piece_words, word_alignment
from anuvad.inference.translation import AttentionView


def test_pieces_are_grouped_into_the_words_white_space_separates() -> None:
    assert piece_words(["▁The", "▁tra", "in", "▁", ".", "</s>"]) == [0, 1, 1, 2, 2, -1]
    assert piece_words(["he", "llo", "▁world"]) == [0, 0, 1]  # a first piece without a mark
    assert piece_words(["▁a", "▁", "</s>"]) == [0, -1, -1]  # a mark before nothing: no word


def _view(
    source: str, text: str, src: list[str], tgt: list[str], rows: list[list[float]]
) -> AttentionView:
    # two layers: the first points everywhere else, so only the last decides
    noise = [[1.0 - w for w in row] for row in rows]
    return AttentionView(source, text, src, tgt, [[noise], [rows]], [], 2, 1, 0.0)


def test_each_target_word_goes_to_the_source_word_with_most_of_its_attention() -> None:
    src = ["▁Visit", "▁Del", "hi", "▁today", "</s>"]
    tgt = ["▁आज", "▁दिल्ली", "▁जा", "एँ", "</s>"]
    rows = [
        [0.1, 0.0, 0.0, 0.8, 0.1],  # आज: today
        [0.1, 0.3, 0.4, 0.1, 0.1],  # दिल्ली: Del + hi together beat Visit
        [0.5, 0.1, 0.0, 0.1, 0.3],  # जा: Visit
        [0.2, 0.0, 0.0, 0.1, 0.7],  # एँ: mostly the end token, which is left out: Visit
        [0.0, 0.0, 0.0, 0.0, 1.0],  # the end row: no word
    ]
    view = _view("Visit Delhi today", "आज दिल्ली जाएँ", src, tgt, rows)
    assert word_alignment(view) == [2, 1, 0]


def test_no_alignment_when_the_pieces_are_not_the_texts_words() -> None:
    src, tgt = ["▁a", "▁b", "</s>"], ["▁x", "▁y", "</s>"]
    rows = [[0.5, 0.5, 0.0]] * 3
    assert word_alignment(_view("a b", "x y", src, tgt, rows)) == [0, 0]
    assert word_alignment(_view("a b", "x y z", src, tgt, rows)) is None  # post-processed


def test_word_order_spreads_target_words_over_the_source() -> None:
    assert diagonal(3, 3) == [0, 1, 2]
    assert diagonal(4, 2) == [1, 3]
    assert diagonal(2, 5) == [0, 0, 1, 1, 1]
    assert diagonal(0, 2) == [0, 0]


def test_words_the_model_read_otherwise_go_back_to_the_sources_words() -> None:
    """ "The ticket costs <b>USD 25</b> in <i>Delhi</i>." was read "… costs $25 in Delhi.": one
    word fewer, so there was no alignment and the bold and italic went by word order ("<b>टिकट
    </b> <i>$25</i>"); the read words now go back to the source's."""
    from anuvad.inference.alignment import read_words

    assert read_words("costs $25 in Delhi", "costs USD 25 in Delhi") == [0, 1, 3, 4]
    assert read_words("paid Rs 500 now", "paid ₹500 now") == [0, 1, 1, 2]
    assert read_words("mail Z1 today", "mail a@b.in today") == [0, 1, 2]
    assert read_words("a b", "a b") == [0, 1] and read_words("extra a", "a") == [0, 0]
    src = ["▁The", "▁ticket", "▁costs", "▁$", "25", "▁in", "▁Delhi", "</s>"]
    tgt = ["▁दिल्ली", "▁में", "▁टिकट", "▁$", "25", "</s>"]
    rows: list[list[float]] = [
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],  # दिल्ली: Delhi
        [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0],  # में: in
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # टिकट: ticket
        [0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0],  # $25: $25, read for "USD 25"
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    ]
    view = _view("The ticket costs USD 25 in Delhi.", "दिल्ली में टिकट $25", src, tgt, rows)
    assert word_alignment(view) is None  # the read words are not the source's
    assert word_alignment(view, "The ticket costs $25 in Delhi.") == [6, 5, 1, 3]  # "$25": USD
