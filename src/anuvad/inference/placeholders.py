"""Links, e-mail addresses, file names, format codes, names marked to keep and words already in
the target's script shown to the model as placeholders: the model translates "Send your
application to Z1 before Friday." ("X1 scored 85 runs." for a name) and the address goes back
where "Z1" came out (below, "address" is any of them).

A small model made to copy an address letter by letter writes address-like junk around it
("Send your application to care@irctc.co.in before Friday." → "शुक्रवार को in पर अपना आवेदन
भेजिए. incov.chovirus पर. … care@irctc.co.in पर"): it has seen few Latin letters and no rule
for them. Made to copy a short placeholder instead, it writes it as a name, and the sentence
around it is translated as if the address were a word. On 20 sentences with an address of each
of four kinds (a URL, a bare domain with a path, an e-mail address, a file name), the shipped
English→Hindi model's outputs held Latin junk outside the address in 61 of 80 as the address
itself was required, and in 0 of 80 with a required placeholder, whose sentences also came
closer to the same sentence written with a plain noun ("the website") in the address's place
(chrF++ 33.5 → 47.9; Hindi→English 40.1 → 60.2; docs/benchmarks.md, "Addresses behind
placeholders"). A kept name written in Latin letters drew junk in 37 of 40 sentences, in 0 behind
"X1" (chrF++ 39.0 → 64.2).

Only the torch engine hides addresses: it encodes :attr:`Hidden.text` and requires each
placeholder as it would the address (:func:`anuvad.inference.required.requirements`). A search
that cannot require (the CTranslate2 engine, the offline page) reads the addresses as written:
left free, the model wrote a placeholder as a Hindi word ("ज़ी") in 44 of the 80. :func:`reveal`
puts the addresses back into every candidate before anything else reads it (a placeholder the
output lost leaves its address to :func:`anuvad.inference.links.carry_links`, which puts a lost
link back), and gives a sentence of addresses alone back as written on every engine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from anuvad.inference.final_mark import SPACE_BEFORE_MARK, SPACES
from anuvad.inference.translation import Candidate
from anuvad.inference.verbatim import Span, Verbatim, find_spans, to_digits

# File names are found as "url"; "name": marked names; "code": "{name}", "%s", "<div>".
HIDDEN_KINDS = ("url", "email", "name", "code")
# "Z1" for an address: in 80 test sentences, never with junk beside it ("X" once gave "X XI").
# "X1" for a marked name: copied as a name in every test sentence ("X1 ने 85 रन बनाए।"), where
# "Z1" came out as the Hindi word "ज़ी" ("ज़ी 85 रन बनाए।") and the name after it.
# "X1" for a code too ("{name}", "%s", "`pip install`"): of 28 UI strings and sentences with
# inline code (bench/codes.py's and 8 more), "Z1" was spelled out beside its copy once ("… के
# लिए ज़ुन ज़ुन `pip install anuvad`."), "X1" never (2026-11-29).
_LETTERS = {"url": "Z", "email": "Z", "code": "X", "name": "X"}
# The placeholder's letter spelled out as a word, which the model sometimes writes beside the
# placeholder it copies ("Write to Z1 today." → "आज 'जेड Z1' के लिए लिखें।"): removed from a
# Devanagari output (an English one may hold "Ex-minister") unless the source has the word
# itself ("Zee News").
# Per letter: the source's words that may be translated so (then nothing is removed), and the
# spellings removed.
_SPELLED = {
    # the letter alone too ("फ़ाइल ज़ notes.txt"), nukta decomposed and precomposed
    "Z": (("z", "zee", "zed"), ("जेड", "ज़ेड", "ज़ीड", "जीड", "ज़ी", "ज़ुन", "ज़", "\u095b")),
    "X": (("x", "ex"), ("एक्स", "ऐक्स")),
}


@dataclass(frozen=True)
class Hidden:
    """A source sentence as the model sees it.

    Attributes:
        text: the sentence with each address replaced by its placeholder, and each amount
            with a currency code as the model reads it ("USD 25" as "$25":
            :func:`anuvad.inference.currency.read_amounts`).
        names: the placeholders, in order ("Z1", "Z2", …).
        addresses: what each placeholder stands for: the address as written (a glossary
            term written in another script than the target's: its translation, "SC").
        starts: where each address begins in the original sentence (its span's start).
        ends: where each ends there.
        source: the original sentence.
        only_addresses: it holds addresses (or names) and nothing else with letters
            (numbers, marks), or no letters at all: nothing to translate, every engine gives it
            back as written, its digits outside them in Latin ("ch001.xhtml", an e-book
            chapter's title, came back as "ज़ीं ch001.xhtml"; a line "***" as "अप्रभाव", "# 1"
            as "#44"; a whole English sentence in Hindi text is English already).
    """

    text: str
    names: tuple[str, ...] = ()
    addresses: tuple[str, ...] = ()
    starts: tuple[int, ...] = ()
    source: str = ""
    only_addresses: bool = False
    ends: tuple[int, ...] = ()


def hide(text: str, spans: Sequence[Span], spellable: Callable[[str], bool]) -> Hidden:
    """``text`` with each span of :data:`HIDDEN_KINDS` replaced by a placeholder that does not
    otherwise occur in it; the other spans stay as written. A target vocabulary that cannot
    spell a placeholder (``spellable``) gets ``text`` as it is."""
    chosen = [s for s in spans if s.kind in HIDDEN_KINDS]
    if not chosen:
        letterless = bool(text.strip()) and not any(c.isalpha() for c in text)
        return Hidden(text, source=text, only_addresses=letterless)
    bounds = [0, *(p for span in chosen for p in (span.start, span.end)), len(text)]
    outside = "".join(text[a:b] for a, b in zip(bounds[::2], bounds[1::2], strict=True))
    alone = not any(c.isalpha() for c in outside)
    letters = [_LETTERS[s.kind] for s in chosen]
    if not all(spellable(f"{letter}1") for letter in set(letters)):
        return Hidden(text, source=text, only_addresses=alone)
    first = 1
    while any(f"{letter}{first + k}" in text for k, letter in enumerate(letters)):
        first += len(chosen)
    names = tuple(f"{letter}{first + k}" for k, letter in enumerate(letters))
    pieces, position = [], 0
    for span, name in zip(chosen, names, strict=True):
        pieces += [text[position : span.start], name]
        position = span.end
    pieces.append(text[position:])
    # As written (an address with its brackets), or a name's target (a glossary translation).
    addresses = tuple(s.target if s.kind == "name" else text[s.start : s.end] for s in chosen)
    starts, ends = tuple(s.start for s in chosen), tuple(s.end for s in chosen)
    return Hidden("".join(pieces), names, addresses, starts, text, alone, ends)


def reveal(output: str, hidden: Hidden) -> str:
    """``output`` with the first whole-word occurrence of each placeholder replaced by its
    address (a repeated one is dropped with the space before it); the source itself, its digits
    outside the addresses in Latin, when it holds nothing but addresses, numbers and marks
    (:attr:`Hidden.only_addresses`)."""
    if hidden.only_addresses:  # digits in Latin, as the search writes them ("१२:३०" into English)
        return _latin_outside(hidden)
    source_words = set(re.findall(r"[^\W\d_]+", hidden.source.casefold()))
    for letter in sorted({name[0] for name in hidden.names}):
        latin, spelled = _SPELLED[letter]
        if output and not source_words & set(latin):  # its letter spelled out as a word too
            # (and the Latin letter alone in a Devanagari output: "X.,,घघंटा"; an English one
            # may hold "Z plus security", "X-rays")
            alone = (letter,) if _mostly_devanagari(output) else ()
            words = "|".join(
                (*spelled, *alone)
            )  # (before the addresses are back: never inside one)
            output = re.sub(rf"(?<![\w\u0900-\u097f])(?:{words})(?![\w\u0900-\u097f])", "", output)
            output = SPACE_BEFORE_MARK.sub("", SPACES.sub(" ", output)).strip()
    for name, address in zip(hidden.names, hidden.addresses, strict=True):
        found = re.search(_whole(name), output)
        if found is None:
            continue
        head, tail = output[: found.start()], output[found.end() :]
        output = head + address + re.sub(" ?" + _whole(name), "", tail)
    return output


def _mostly_devanagari(text: str) -> bool:
    """Whether more of ``text``'s letters are Devanagari than Latin."""
    devanagari = sum("\u0900" <= c <= "\u097f" for c in text)
    return devanagari > sum(c.isascii() and c.isalpha() for c in text)


def _latin_outside(hidden: Hidden) -> str:
    """The source with its digits in Latin outside its hidden addresses and names ("iPhone
    १५" → "iPhone 15"; "page२.in" stays)."""
    source, out, position = hidden.source, [], 0
    for start, end, address in zip(hidden.starts, hidden.ends, hidden.addresses, strict=True):
        out += [to_digits(source[position:start], "latin"), address]
        position = end
    return "".join([*out, to_digits(source[position:], "latin")])


def _whole(name: str) -> str:
    """The pattern of a whole placeholder (not inside a longer name: "XZ1", "Z12")."""
    return rf"(?<![A-Za-z0-9]){re.escape(name)}(?![0-9])"


def _swapped(word: str, hidden: Hidden) -> str:
    """``word`` with each whole placeholder in it replaced by its address."""
    for name, address in zip(hidden.names, hidden.addresses, strict=True):
        word = re.sub(_whole(name), lambda _, a=address: a, word)  # type: ignore[misc]
    return word


def reveal_words(candidates: Sequence[list[Candidate]], hidden: Sequence[Hidden | None]) -> None:
    """The best candidates' word scores (:attr:`Quality.words`, made from the pieces the model
    wrote) with each placeholder word as its address, found in the candidate's text."""
    for own, sentence in zip(candidates, hidden, strict=True):
        quality = own[0].quality if own else None
        if sentence is None or not sentence.names or quality is None:
            continue
        text, cursor = own[0].text, 0
        for word in quality.words:
            if word.start >= 0:
                cursor = word.end
                continue
            swapped = _swapped(word.text, sentence)
            if swapped == word.text:
                continue
            for candidate in (swapped, swapped.rstrip(".,;:!?।")):
                at = text.find(candidate, cursor)
                if at >= 0:
                    word.text, word.start, word.end = candidate, at, at + len(candidate)
                    cursor = word.end
                    break


def reveal_candidates(
    candidates: Sequence[list[Candidate]], hidden: Sequence[Hidden | None]
) -> list[list[Candidate]]:
    """Each sentence's candidates with their addresses back (:func:`reveal`), in place."""
    for own, sentence in zip(candidates, hidden, strict=True):
        if sentence is not None and (sentence.names or sentence.only_addresses):
            for candidate in own:
                candidate.text = reveal(candidate.text, sentence)
                candidate.as_written = sentence.only_addresses
    return list(candidates)


def addresses_alone(
    texts: Sequence[str], policies: Sequence[Verbatim | None]
) -> list[Hidden | None]:
    """For an engine that reads addresses as written: per text under a policy, its
    :class:`Hidden` (no placeholders) when it holds addresses alone, else None."""
    found: list[Hidden | None] = []
    for text, policy in zip(texts, policies, strict=True):
        # Codes and words in the target's script are the torch engine's alone: the page reads
        # them as written, and so does this.
        alone = replace(policy, codes=False, target_script=False) if policy else None
        spans = find_spans(text, alone) if alone else []
        hidden = hide(text, spans, lambda _: False) if policy else None
        found.append(hidden if hidden is not None and hidden.only_addresses else None)
    return found


__all__ = [
    "HIDDEN_KINDS",
    "Hidden",
    "addresses_alone",
    "hide",
    "reveal",
    "reveal_candidates",
    "reveal_words",
]
