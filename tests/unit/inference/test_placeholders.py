"""Links, e-mail addresses and file names reach the model as placeholders and come back as
written: exactly once in every candidate, reported as copied, the model never seeing them."""

from __future__ import annotations

import pytest

from anuvad.inference.placeholders import addresses_alone, hide, reveal
from anuvad.inference.translator import Translator
from anuvad.inference.verbatim import Verbatim, find_spans
from conftest import encoded_texts


def _hidden(text: str) -> tuple[str, tuple[str, ...]]:
    h = hide(text, find_spans(text, Verbatim()), lambda _: True)
    return h.text, h.addresses


def test_each_address_gets_its_own_placeholder_and_numbers_stay() -> None:
    text = "Write to care@irctc.co.in or see https://irctc.co.in/faq and report_2024.pdf by 5 May."
    assert _hidden(text) == (
        "Write to Z1 or see Z2 and Z3 by 5 May.",
        ("care@irctc.co.in", "https://irctc.co.in/faq", "report_2024.pdf"),
    )
    # a placeholder never stands for text of the source itself (an identifier written like one
    # is hidden too, behind the next free names)
    source = "Flight Z1 and X1: see www.example.org"
    found = hide(source, find_spans(source, Verbatim(codes=False)), lambda _: True)
    assert found.text == "Flight Z1 and X1: see Z2"
    found = hide(source, find_spans(source, Verbatim()), lambda _: True)
    assert found.text == "Flight X4 and X5: see Z6" and reveal(found.text, found) == source
    assert _hidden("No address here, only 12 numbers.") == ("No address here, only 12 numbers.", ())


def test_reveal_puts_each_address_back_once_and_leaves_a_lost_one_to_the_link_check() -> None:
    text = "Mail a@b.co or c@d.co."
    hidden = hide(text, find_spans(text, Verbatim()), lambda _: True)
    assert hidden.names == ("Z1", "Z2")
    assert reveal("Z1 या Z2 पर मेल करें।", hidden) == "a@b.co या c@d.co पर मेल करें।"
    assert reveal("Z1 या Z1 पर Z2।", hidden) == "a@b.co या पर c@d.co।"  # the repeat goes
    assert reveal("मेल करें।", hidden) == "मेल करें।"
    assert reveal("XZ1 Z12", hidden) == "XZ1 Z12"  # only whole placeholders


def test_a_marked_name_is_an_x_placeholder_each_time_it_occurs() -> None:
    """A name the user marks to keep ("Rohit Sharma") reaches the model as "X1", which it
    writes as a name, where the name written in Latin letters drew Latin junk after it."""
    text = "Rohit Sharma thanked Virat Kohli at irctc.co.in, said Rohit Sharma."
    keep = Verbatim(keep=("Rohit Sharma", "Virat Kohli"))
    hidden = hide(text, find_spans(text, keep), lambda _: True)
    assert hidden.text == "X1 thanked X2 at Z3, said X4."
    assert hidden.addresses == ("Rohit Sharma", "Virat Kohli", "irctc.co.in", "Rohit Sharma")
    assert reveal("X1 ने X2 को Z3 पर धन्यवाद दिया, X4 ने कहा।", hidden) == (
        "Rohit Sharma ने Virat Kohli को irctc.co.in पर धन्यवाद दिया, Rohit Sharma ने कहा।"
    )
    # a vocabulary that spells only one of the letters sees the source as it is
    assert hide(text, find_spans(text, keep), lambda s: s.startswith("Z")).text == text


@pytest.mark.parametrize("line", ["***", "```", "12:30", "— 2024 —", "| ₹20 |"])
def test_a_sentence_without_letters_comes_back_as_written(line: str) -> None:
    """Nothing to translate: "***" came back as the word "अप्रभाव", "# 1" as "#44"."""
    hidden = hide(line, find_spans(line, Verbatim()), lambda _: True)
    assert hidden.only_addresses and hidden.names == ()
    assert reveal("अप्रभाव", hidden) == line
    # into English, its digits as the search writes them
    devanagari = hide("१२:३०", find_spans("१२:३०", Verbatim()), lambda _: True)
    assert reveal("12:30", devanagari) == "12:30"
    # the engines that read addresses as written read codes so too (as the page does)
    assert addresses_alone(["{name}", "www.a.in"], [Verbatim()] * 2)[0] is None
    assert not hide("# Heading", [], lambda _: True).only_addresses
    assert not hide("  ", [], lambda _: True).only_addresses


def test_a_vocabulary_that_cannot_spell_a_placeholder_sees_the_source_as_it_is() -> None:
    text = "See www.example.org now."
    assert hide(text, find_spans(text, Verbatim()), lambda _: False).text == text
    assert hide(text, find_spans(text, Verbatim()), lambda _: True).text == "See Z1 now."
    # an engine that reads addresses as written still gives a sentence of them back
    assert addresses_alone([text], [Verbatim()]) == [None]
    assert addresses_alone(["www.example.org (2)"], [None]) == [None]
    (alone,) = addresses_alone(["www.example.org (2)"], [Verbatim()])
    assert alone is not None and alone.only_addresses and alone.text == "www.example.org (2)"
    assert reveal("कुछ भी", alone) == "www.example.org (2)"  # given back as written


@pytest.fixture(scope="module")
def latin_translator() -> Translator:
    """A random English→Hindi model whose character vocabulary can spell placeholders and
    addresses; outputs of at most 12 pieces."""
    from conftest import EN_HI_PAIRS, char_translator

    return char_translator(
        [en for en, _ in EN_HI_PAIRS] + ["care@irctc.co.in XZ 0123456789"],
        [hi for _, hi in EN_HI_PAIRS] + ["care@irctc.co.in RS XZ 0123456789"],
        ("en", "hi"),
        beam_size=3,
        name="placeholders",
    )


@pytest.mark.parametrize("beam", [1, 3])
def test_the_model_sees_placeholders_and_every_candidate_holds_each_address_once(
    latin_translator: Translator, beam: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = encoded_texts(monkeypatch, latin_translator, "encode")
    texts = ["Write to care@irctc.co.in today.", "See irctc.co.in and care@irctc.co.in now."]
    settings = latin_translator.settings(beam_size=beam, nbest=beam)
    results = latin_translator.translate(texts, settings, verbatim=Verbatim())
    assert seen == ["Write to Z1 today.", "See Z1 and Z2 now."]
    for text, result in zip(texts, results, strict=True):
        assert result.source == text
        assert [(c.kind, c.required, c.present) for c in result.copied] == [
            (kind, True, True) for kind in (["email"] if "Write" in text else ["url", "email"])
        ]
        for candidate in result.nbest:
            rest = candidate.text.replace("care@irctc.co.in", "")
            assert candidate.text.count("care@irctc.co.in") == 1, candidate.text
            assert "Z1" not in rest and "Z2" not in rest, candidate.text
    # a format placeholder too, whatever the vocabulary spells ("{" and "}": it has neither)
    seen.clear()
    (coded,) = latin_translator.translate(["Hi {name} today."], settings, verbatim=Verbatim())
    assert seen == ["Hi X1 today."]
    assert all(c.text.count("{name}") == 1 for c in coded.nbest), coded.nbest
    # a marked name too, as "X1"

    seen.clear()
    (named,) = latin_translator.translate(
        ["RS wrote today."], settings, verbatim=Verbatim(keep=("RS",))
    )
    assert seen == ["X1 wrote today."]
    assert all(c.text.count("RS") == 1 and "X1" not in c.text for c in named.nbest), named.nbest
    # without a policy the model reads the addresses as they are
    seen.clear()
    latin_translator.translate(texts[:1], settings)
    assert seen == texts[:1]


def test_a_sentence_of_addresses_alone_comes_back_as_written(latin_translator: Translator) -> None:
    texts = ["care@irctc.co.in", "irctc.co.in, care@irctc.co.in (2)", "***", "12 - 30"]
    for result in latin_translator.translate(
        texts, latin_translator.settings(nbest=2), verbatim=Verbatim()
    ):
        assert [c.text for c in result.nbest] == [result.source] * len(result.nbest)
    # its quality is of the copy, not of the model output thrown away (API review: "***" came
    # back with the word "अप्रभाव" at -1, likely wrong)
    for result in latin_translator.translate(texts, verbatim=Verbatim(), quality=True):
        assert result.quality is not None and result.quality.words == []
        assert result.quality.token_probs == [] and not result.quality.likely_wrong
    (plain,) = latin_translator.translate(["Thank you."], verbatim=Verbatim(), quality=True)
    assert plain.quality is not None and plain.quality.token_probs


def test_the_attention_and_the_word_scores_follow_what_the_model_read(
    latin_translator: Translator,
) -> None:
    """The attention view is over the source the model read (the placeholder's pieces), with
    as many words as the source; the word scores name the address where the text holds it."""
    text = "Write to care@irctc.co.in today."
    (result,) = latin_translator.translate([text], verbatim=Verbatim(), quality=True)
    assert result.read == "Write to Z1 today."
    view = latin_translator.attention_of(result)
    assert view.source == text
    assert "".join(view.src_tokens).replace("▁", " ").strip().startswith("Write to Z1 today.")
    assert result.quality is not None
    for word in result.quality.words:
        assert "Z1" not in word.text
        if word.start >= 0:
            assert result.text[word.start : word.end] == word.text
    assert any("care@irctc.co.in" in w.text and w.start >= 0 for w in result.quality.words)
    (plain,) = latin_translator.translate(["Thank you."], verbatim=Verbatim())
    assert plain.read == ""


def test_words_already_in_the_target_script_are_copied_as_marked_names_are() -> None:
    """A Latin name or acronym in Hindi text (and a Hindi word in English text) reaches the
    model as "X1": left free it was rewritten ("AM" → "Aam"), required as written it drew junk;
    links, numbers and codes keep their own spans."""
    from anuvad.inference.target_script import target_script_runs

    text = "मैंने Samsung Galaxy S24 Ultra www.a.in से खरीदा, U.S. और Twitter."
    runs = [text[a:b] for a, b in target_script_runs(text, "hi", "en")]
    assert runs == ["Samsung Galaxy S24 Ultra www.a.in", "U.S.", "Twitter"]
    link = (text.index("www"), text.index("www") + len("www.a.in"))
    runs = [text[a:b] for a, b in target_script_runs(text, "hi", "en", skip=[link])]
    assert runs == ["Samsung Galaxy S24 Ultra", "U.S.", "Twitter"]
    spans = find_spans(text, Verbatim(langs=("hi", "en")))
    assert [(s.kind, s.target) for s in spans] == [
        ("name", "Samsung Galaxy S24 Ultra"),
        ("url", "www.a.in"),
        ("name", "U.S."),
        ("name", "Twitter"),
    ]
    hidden = hide(text, spans, lambda _: True)
    assert hidden.text == "मैंने X1 Z2 से खरीदा, X3 और X4."
    assert [s.target for s in find_spans("I said नमस्ते.", Verbatim(langs=("en", "hi")))] == ["नमस्ते"]
    without = find_spans(text, Verbatim(langs=("hi", "en"), target_script=False))
    assert [(s.kind, s.target) for s in without] == [("name", "S24"), ("url", "www.a.in")]
    assert {s.kind for s in find_spans(text, Verbatim(target_script=False, codes=False))} == {
        "number",
        "url",
    }  # "24" of "S24", the link
    assert target_script_runs("Hello there", "en", "de") == []  # one script: nothing


@pytest.mark.parametrize(
    ("text", "langs", "runs"),
    [
        ("I paid ५०० rupees at १२:३०.", ("en", "hi"), []),  # digits are no letters
        ("I said नमस्ते।", ("en", "hi"), ["नमस्ते"]),  # nor is the danda
        ("मैं Mr. Modi.", ("hi", "en"), ["Mr. Modi"]),  # an abbreviation keeps its stop
        ("Rs. 500 और Dr. शर्मा", ("hi", "en"), ["Rs.", "Dr."]),
        ("Hello world. Bye", ("hi", "en"), ["Hello world", "Bye"]),  # two sentences
        ("@user और #tag", ("hi", "en"), ["@user", "#tag"]),
        # a lone "&" joins ("A & B कंपनी" came out "A B company"), a "&" at an edge does not
        (
            "A & B कंपनी और Johnson & Johnson, AT&T",
            ("hi", "en"),
            ["A & B", "Johnson & Johnson", "AT&T"],
        ),
        ("Tom & और & Jerry", ("hi", "en"), ["Tom", "Jerry"]),
    ],
)
def test_a_run_is_words_of_the_target_letters_up_to_a_sentence_end(
    text: str, langs: tuple[str, str], runs: list[str]
) -> None:
    from anuvad.inference.target_script import target_script_runs

    assert [text[a:b] for a, b in target_script_runs(text, *langs)] == runs


def test_a_glossary_term_cuts_a_run_and_digits_outside_names_come_back_latin() -> None:
    from anuvad.inference.glossary import Glossary

    text = "मैंने Samsung Galaxy S24 खरीदा"
    terms = Glossary.from_pairs([("Galaxy", "गैलेक्सी")]).match_spans(text)
    spans = find_spans(text, Verbatim(langs=("hi", "en")), terms)
    assert [(s.kind, s.target) for s in spans] == [("name", "Samsung"), ("name", "S24")]
    alone = hide("iPhone १५", find_spans("iPhone १५", Verbatim(langs=("hi", "en"))), bool)
    assert alone.only_addresses and reveal("x", alone) == "iPhone 15"


@pytest.mark.parametrize(
    ("text", "identifiers"),
    [
        ("Flight AI302 leaves from gate 4B at 18:45.", ["AI302", "4B"]),
        ("Your order ID is AB12-345X.", ["AB12-345X"]),
        ("Use the coupon SAVE50 today, or XK47Q9.", ["SAVE50", "XK47Q9"]),
        ("The commit is 3f9a1c2b7e8d now.", ["3f9a1c2b7e8d"]),
        ("An MP3 of the G20 and T20 on an iPhone15", ["MP3", "G20", "T20", "iPhone15"]),
        # numbers with units, ordinals and decades, and a word joined to a number: the model's
        ("COVID-19 in the 1990s at 9am-5pm on the 12th, 5km, 2GB, 10:30am, 3.5kg", []),
        # compounds of words and numbers, currencies and glued units (review)
        ("The 2nd-floor 5-star hotel, a 2-year-old, Rs50, 100km/h, 7days, 60fps", []),
        ("A 3-day COVID-19-related event on 12-Jan-2024 or 15th-Aug, 12-hour, Rs500/-", []),
        ("A4 paper, B2B, 24x7 and iOS17", ["A4", "B2B", "24x7", "iOS17"]),
        # parts of links, e-mail addresses, file names, hashtags and handles are not
        ("See https://x.org/abc123, a1@b.com, IMG_001.JPG, #tag1 and @user33.", []),
    ],
)
def test_identifiers_of_letters_and_digits_are_copied_as_names(
    text: str, identifiers: list[str]
) -> None:
    """Newcomer review: "Flight AI302 leaves from gate 4B" came back "… गे302 पत्ते … 4।" (only
    the digits were copied)."""
    spans = find_spans(text, Verbatim(langs=("en", "hi")))
    assert [s.target for s in spans if s.kind == "name"] == identifiers
    inside = [(s.start, s.end) for s in spans if s.kind == "name"]
    assert not any(  # the digits of an identifier are not a number of their own
        s.kind == "number" and any(a <= s.start < b for a, b in inside) for s in spans
    )
    hidden = hide(text, spans, lambda _: True)
    assert all(i not in hidden.text for i in identifiers)
    assert reveal(hidden.text, hidden) == text  # every identifier back in its place
    # a run of words in the target's script keeps an identifier inside it whole
    runs = find_spans("मैंने Samsung Galaxy S24 Ultra खरीदा", Verbatim(langs=("hi", "en")))
    assert [s.target for s in runs] == ["Samsung Galaxy S24 Ultra"]


def test_an_address_takes_its_angle_brackets_and_a_spelled_placeholder_letter_goes() -> None:
    """CLI review: "Write to <info@example.com> today." came back "आज * 'जेड info@example.com'
    के लिए लिखें।": the model wrote the brackets as junk and spelled "Z" out beside "Z1"."""
    text = "Write to <info@example.com> today."
    hidden = hide(text, find_spans(text, Verbatim()), lambda _: True)
    assert hidden.text == "Write to Z1 today." and hidden.addresses == ("<info@example.com>",)
    assert reveal("आज जेड Z1 के लिए लिखें।", hidden) == "आज <info@example.com> के लिए लिखें।"
    assert reveal("Z1 ज़ीड, ज़ी को लिखें।", hidden) == "<info@example.com>, को लिखें।"
    # the letter alone, nukta decomposed or precomposed, or in Latin ("फ़ाइल ज़ notes.txt")
    for alone in ("ज\u093c", "\u095b", "Z"):
        assert reveal(f"आज {alone} Z1 को लिखें।", hidden) == "आज <info@example.com> को लिखें।"
    assert reveal("आज ज़मीन Z1 पर।", hidden) == "आज ज़मीन <info@example.com> पर।"  # a word
    # an English output keeps a Latin "Z" or "X" of its own (review: "Z plus security")
    assert reveal("Got Z plus security, see Z1", hidden) == (
        "Got Z plus security, see <info@example.com>"
    )
    # a source that has the word keeps its translation ("Zee News" is "ज़ी न्यूज़")
    news = "Watch Zee News at zeenews.com today."
    shown = hide(news, find_spans(news, Verbatim()), lambda _: True)
    assert reveal("आज ज़ी न्यूज़ Z1 पर देखें।", shown) == "आज ज़ी न्यूज़ zeenews.com पर देखें।"
    from anuvad.inference.links import carry_links

    assert carry_links("आज <info@example.com> को।", text) == "आज <info@example.com> को।"
