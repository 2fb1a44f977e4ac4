"""What every result gets last: no unknown mark left for a reader, and characters the model
cannot read carried from the source like those the target cannot spell."""

from __future__ import annotations

import pytest

from anuvad.config import TokenizerConfig
from anuvad.data.tokenizer import train_tokenizer
from anuvad.inference.frontend import translation_of
from anuvad.inference.post_search import (
    carried_runs,
    carry_symbols,
    finish,
    readable_and_spelled,
    without_unknown,
)
from anuvad.inference.translation import Candidate


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (" ⁇  ₹500 अब तक।", "₹500 अब तक।"),  # "Pay ₹500 now.": the sign was put back
        ("आज  ⁇  ₹1,000 सहेजें।", "आज ₹1,000 सहेजें।"),
        ("ट्रेन  ⁇  ⁇  देर से है।", "ट्रेन देर से है।"),
        ("यह ⁇।", "यह।"),
        ("a ⁇, b", "a, b"),
        ("कोई निशान नहीं", "कोई निशान नहीं"),
        (" ⁇  ⁇ ।", " ⁇  ⁇ ।"),  # nothing else: not made empty, the failure stays visible
    ],
)
def test_no_unknown_mark_is_left(text: str, expected: str) -> None:
    assert without_unknown(text) == expected


def test_finish_leaves_no_unknown_mark_in_any_candidate_and_keeps_them_distinct() -> None:
    candidates = [
        Candidate(" ⁇  ₹500 अब।", [], -1.0, -1.0, True),
        Candidate("₹500 अब।", [], -2.0, -2.0, True),  # the same text once the mark goes
        Candidate("अब ₹500 ⁇", [], -3.0, -3.0, True),
    ]
    (result,) = [translation_of("Pay ₹500 now.", candidates)]
    finish([result], None, "en", "hi")
    assert [c.text for c in result.nbest] == ["₹500 अब।", "अब ₹500"]
    assert result.text == "₹500 अब।"


def test_a_character_the_model_cannot_read_is_carried_as_one_the_target_lacks() -> None:
    """ "See §3 and ¶2." came out "देखें ⁇ 3 और ⁇ -2।": the target spells "§", the source
    vocabulary does not, so the model saw an unknown piece."""
    src = train_tokenizer(["See 3 and 2 now."] * 20, TokenizerConfig(model_type="char"), 40)
    target_spells = readable_and_spelled(src, lambda text: True)
    assert not target_spells("§") and not target_spells("¶") and target_spells("See 3")
    source, output = "See §3 and ¶2.", "देखें ⁇ 3 और ⁇ -2।"
    assert carry_symbols(source, output, target_spells, ("en", "hi")) == "देखें § 3 और ¶ -2।"
    assert carry_symbols(source, output, lambda text: True, ("en", "hi")) == output


def test_other_punctuation_is_carried_but_never_a_danda() -> None:
    lacks = "•†′।॥|"

    def spellable(text: str) -> bool:
        return not any(c in lacks for c in text)

    source = "• Buy rice† at 5′."
    runs = carried_runs(source, spellable, ("en", "hi"))
    assert [source[a:b] for a, b in runs] == ["•", "†", "′"]
    # into English: the dandas end sentences; the punctuation rules write them as full stops
    assert carried_runs("राम घर गया। सीता आई॥ वह | गई", spellable, ("hi", "en")) == []
