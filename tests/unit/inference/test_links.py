"""Links in an output: each of the source's exactly once, nothing link-like the source lacks,
the words around them kept."""

from __future__ import annotations

import re

import pytest

from anuvad.inference.links import carry_links
from anuvad.inference.verbatim import Verbatim, find_spans

LINKISH = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+|\S*[A-Za-z]\S*\.\S+\.\S+")

CASES = [
    # (source, what a small model wrote, the words that must stay)
    (
        "Visit https://www.irctc.co.in for bookings or write to care@irctc.co.in.",
        "बुकिंग care@irctc.co.in https://www.irm.in.inin.m.c.ine.int.ina.inar.cc.mm.ms.inc.p"
        ".ino.carc.. https://www.irctc.co.in के लिए।",
        ["बुकिंग", "के", "लिए।"],
    ),
    (
        "Call 139 or visit https://www.irctc.co.in for help.",
        "139 या https://www.irctc.co.in... A.m.ine.inin.inarc.int.ina।",
        ["139", "या"],
    ),
    (
        "The weather is nice today. Visit https://www.irctc.co.in now.",
        "मौसम आज अच्छा है। विश्व स्तर परम्परा.in.ine.inin.m.inorm।",
        ["मौसम", "आज", "अच्छा", "विश्व", "स्तर", "परम्परा"],
    ),
    (
        "Write to care@irctc.co.in today.",
        "आज care@irctc.co.in पर care@irctc.co.in लिखें।",
        ["आज", "पर", "लिखें।"],
    ),
    ("Write to care@irctc.co.in today.", "आज लिखें।", ["आज", "लिखें"]),
    # A link the source repeats is kept each time (the output had "help@example.com और को").
    (
        "Send the form to help@example.com and copy help@example.com again.",
        "इस रूप में help@example.com और help@example.com को फिर से भेजें।",
        ["इस", "रूप", "में", "और", "को", "फिर", "से", "भेजें।"],
    ),
    (
        "See www.example.org, www.example.org and www.example.org.",
        "www.example.org और www.example.org देखें. www.example.org www.example.org।",
        ["और", "देखें."],
    ),
    (
        "See www.example.org, www.example.org and www.example.org.",
        "www.example.org और देखें।",
        ["और", "देखें"],
    ),
]


def source_links(source: str) -> list[str]:
    return [source[s.start : s.end] for s in find_spans(source, Verbatim(numbers=False))]


@pytest.mark.parametrize(("source", "output", "words"), CASES)
def test_each_source_link_appears_once_and_nothing_link_like_is_invented(
    source: str, output: str, words: list[str]
) -> None:
    fixed = carry_links(output, source)
    links = source_links(source)
    for link in links:
        assert fixed.count(link) == links.count(link), fixed
    rest = fixed
    for link in links:
        rest = rest.replace(link, " ")
    assert not LINKISH.search(rest), fixed
    assert all(word in fixed for word in words), fixed


def test_a_lost_link_goes_where_the_junk_stood_else_before_the_final_mark() -> None:
    source = "The weather is nice today. Visit https://www.irctc.co.in now."
    junk = "मौसम अच्छा है। देखें परम्परा.in.ine.inin.m.inorm अभी।"
    assert carry_links(junk, source) == "मौसम अच्छा है। देखें परम्परा https://www.irctc.co.in अभी।"
    assert carry_links("मौसम अच्छा है।", source) == "मौसम अच्छा है https://www.irctc.co.in।"


def test_text_without_links_and_dotted_words_of_the_source_are_left_alone() -> None:
    assert carry_links("यह 3.5 है।", "It is 3.5.") == "यह 3.5 है।"
    assert carry_links("तिथि 12.06.2024 है।", "The date is 12.06.2024.") == "तिथि 12.06.2024 है।"
    assert carry_links("वह U.S. गया।", "He went to the U.S. today.") == "वह U.S. गया।"
    assert carry_links("वह ab.cd.ef गया।", "He went.") == "वह गया।"


@pytest.mark.parametrize(
    ("output", "source"),
    [
        ("A.P.J. Abdul Kalam said.", "ए.पी.जे. अब्दुल कलाम ने कहा।"),  # initials, into English
        ("The B.J.P. won.", "भाजपा जीती।"),
        ("It costs Rs.1.5 lakh.", "यह 1.5 लाख का है।"),
        ("अधिक जानकारी के लिए देखें https://x.com।", "For more see https://x.com."),
        ("(https://x.com) पर जाएँ।", "Go to (https://x.com)."),
        ("Visit https://x.com, then call.", "Visit https://x.com, then call."),
        ("Mail care@irctc.co.in.", "लिखें care@irctc.co.in पर।"),
        ("देखें HTTPS://X.COM/a पर।", "See HTTPS://X.COM/a now."),
    ],
)
def test_what_is_not_junk_stays_and_the_punctuation_after_a_link_too(
    output: str, source: str
) -> None:
    assert carry_links(output, source) == output


def test_a_partial_link_is_junk_and_the_whole_link_comes_back_once() -> None:
    fixed = carry_links("https://www.irctc.co पर जाएँ।", "Go to https://www.irctc.co.in now.")
    assert fixed == "https://www.irctc.co.in पर जाएँ।"
    glued = carry_links(
        "139 या https://www.irctc.co.in... A.m.ine।", "Call 139 or see https://www.irctc.co.in."
    )
    assert glued.count("https://www.irctc.co.in") == 1 and "..." not in glued and "A.m" not in glued


def test_a_run_of_address_fragments_around_a_link_is_removed_and_only_then() -> None:
    # newcomer review: Hindi->English wrote fragments before the link it was made to copy
    source = "कृपया https://www.irctc.co.in/nget/train-search पर जाएँ।"
    junk = "Please go on / / e.g. / e - / / jp. / junct. / bp. - i. e. e - - / e-m. / "
    link = "https://www.irctc.co.in/nget/train-search."
    assert carry_links(junk + link, source) == "Please go on " + link
    # fewer marked tokens, a run the source holds, or no link in the source: left alone
    assert carry_links("Write to a - b - c at care@x.in.", "Write care@x.in") == (
        "Write to a - b - c at care@x.in."
    )
    assert carry_links("See p. / q. / r. at www.a.in", "See p. / q. / r. at www.a.in") == (
        "See p. / q. / r. at www.a.in"
    )
    assert carry_links("Please go on / / e.g. / e -", "जाएँ") == "Please go on / / e.g. / e -"


def test_a_bare_domain_with_a_path_is_taken_whole_not_written_twice() -> None:
    source = "Visit indianrail.gov.in/tickets for bookings."
    for output in ("indianrail.gov.in/tickets को देखें।", "indianrail.gov.in को देखें।"):
        assert carry_links(output, source) == "indianrail.gov.in/tickets को देखें।"
