"""Links and e-mail addresses in an output: each of the source's as often as the source has
it, none invented.

A small model that meets a link writes address-like junk around it or instead of it ("care@
irctc.co.in https://www.irm.in.inin.m.c.ine.int.ina.inar.cc.mm …", or with the CTranslate2
engine, which cannot be made to copy, "विश्व स्तर परम्परा.in.ine.inin.m.inorm" and no link;
issue 40 item 2). Every candidate of both engines goes through :func:`carry_links`, as
IndicTrans2's text processor restores the links it set aside:

1. **Nothing link-like that the source lacks**: a URL, an e-mail address, or a run of Latin
   letters and digits with two or more full stops inside ("A.m.ine.inin") in the output is
   removed unless it is one of the source's links; a source link glued to junk
   ("https://www.irctc.co.in...A.m.ine") keeps the link and loses the rest. Dotted words the
   source itself holds ("U.S.", "e.g.") stay.
2. **No runs of address fragments**: around a link the model also writes fragments between
   spaces ("Please go on / / e.g. / e - / / jp. / junct. / https://…"): three or more short
   tokens in a row (a few of "/ . : - _ =" alone, one letter, or a few letters with those marks
   inside or after them), three of them at least with marks and one of marks alone, the run not
   in the source, are removed when the source has a link.
3. **Each source link as often as the source has it**: a link the output writes more often is
   kept the first times ("Send it to a@b.in and a@b.in" keeps both, a single one written twice
   keeps one); a link it lost is put back where the first junk stood (where the model tried to
   write it), else before the sentence's final punctuation.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from anuvad.inference.final_mark import before_final_mark
from anuvad.inference.verbatim import Verbatim, find_spans

# What may be a link in an output: with a scheme or www., an e-mail address, or Latin letters
# and digits with two or more inner full stops and a lower-case run of two letters or more
# (a bare domain, or the junk a model writes: "A.m.ine.inin"; not initials such as "A.P.J."
# or "B.J.P.", nor "Rs.1.5").
_LINKISH = re.compile(
    r"(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\.)[^\s<>\"']*"  # (no inline flag: the page's too)
    r"|[A-Za-z0-9._%+-]*[A-Za-z0-9]@[A-Za-z0-9.-]+"
    r"|(?<![\w.])(?=[\w@.-]*[a-z]{2})[A-Za-z0-9@_-]*(?:\.[A-Za-z0-9@_-]+){2,}\.?"
    r"|(?<=[\u0900-\u097f])(?:\.[A-Za-z]+)+\.?",  # glued to a Devanagari word: "परम्परा.in.ine"
)
# Punctuation a link-like match takes from the sentence around it: kept when the match goes.
_TRAILING = re.compile(r"[.,;:!?)\]}'\"”’।]+$")
_LINKS = Verbatim(numbers=False, codes=False)
# An address fragment between spaces: a few of "/ . : - _ =" alone, one letter alone, or
# letters with those marks inside or after them ("e.g.", "jp.", "e-m."); never a whole
# address. Each part is bounded and the marks sit between the letter runs, so the pattern
# cannot backtrack far.
_JUNK_TOKEN = (
    r"(?!\S*(?:://|@|www\.))"
    r"(?:[/.:_=-]{1,3}|[A-Za-z]{1,6}(?:(?:[/.:-][A-Za-z]{1,6})+[/.:-]?|[/.:-])|[A-Za-z](?!\S))"
)
_JUNK_RUN = re.compile(rf"(?<!\S){_JUNK_TOKEN}(?:\s+{_JUNK_TOKEN}){{2,}}(?!\S)")
# A space left before the final mark where junk was cut out ("139 या https://… ।" keeps it:
# after a link, the mark would read as part of the address).
_SPACE_BEFORE_END = re.compile(r"(?<=[^\s\w/@.-]|[\u0900-\u097f]) +([।.!?]+)$")


def source_links(source: str) -> list[str]:
    """The links and e-mail addresses of ``source`` in order, a repeated one each time (without
    the angle brackets around one: "<a@b.in>" is the address a@b.in)."""
    return [s.target for s in find_spans(source, _LINKS)]


def carry_links(text: str, source: str, links: Sequence[str] | None = None) -> str:
    """``text`` (a translation of ``source``) with the source's links and e-mail addresses,
    each as often as the source has it, and no other link-like text (see the module
    docstring); ``links``: the source's (:func:`source_links`), when the caller has them for
    all its candidates."""
    links = source_links(source) if links is None else links
    if not links and not _LINKISH.search(text):
        return text
    if links:
        text = _JUNK_RUN.sub(lambda m: _junk_or_kept(m.group(), source), text)
    wanted = Counter(links)
    longest_first = sorted(wanted, key=len, reverse=True)
    kept: Counter[str] = Counter()
    out: list[str] = []
    pos, gap = 0, -1
    for match in _LINKISH.finditer(text):
        if match.start() < pos:  # inside a source link taken whole below
            continue
        found = match.group()
        out.append(text[pos : match.start()])
        # A source link the pattern took only the start of ("indianrail.gov.in" of
        # "indianrail.gov.in/tickets": a bare domain's path) is taken whole.
        found = next(
            (k for k in longest_first if len(k) > len(found) and text.startswith(k, match.start())),
            found,
        )
        pos = match.start() + len(found)
        link = next((k for k in longest_first if found.startswith(k)), None)
        rest = found[len(link) :] if link is not None else ""
        if link is not None and (not rest or (_TRAILING.fullmatch(rest) and ".." not in rest)):
            if kept[link] < wanted[link]:  # the source's link, then what the sentence put after
                kept[link] += 1
                out.append(link)
            out.append(rest)
            continue
        word = found.rstrip(".")
        if word in source and not any(word in k for k in links):
            out.append(found)  # a dotted word of the source ("U.S.", "e.g.")
            continue
        if gap < 0:
            gap = len("".join(out))
        tail = _TRAILING.search(found)
        if tail is not None and "." not in tail.group():  # the sentence's own mark stays
            out.append(tail.group())
    out.append(text[pos:])
    cleaned = "".join(out)
    have = {link: max(kept[link], cleaned.count(link)) for link in wanted}
    missing = []
    for link in links:  # in the source's order, a repeated link each time it is short
        if have[link] > 0:
            have[link] -= 1
        else:
            missing.append(link)
    if missing and gap < 0:
        cleaned = before_final_mark(cleaned, missing)
    elif missing:
        before, after = cleaned[:gap].rstrip(), cleaned[gap:].lstrip()
        glue = " " if after and after[0].isalnum() else ""
        cleaned = " ".join([before, *missing]).strip() + glue + after
    cleaned = re.sub(r" {2,}", " ", cleaned).strip()
    return _SPACE_BEFORE_END.sub(r"\1", cleaned)


def _junk_or_kept(run: str, source: str) -> str:
    """A :data:`_JUNK_RUN` match: a space where it is junk (three tokens with marks at least,
    one of them marks alone, the run not in the source), else itself."""
    tokens = run.split()
    marked = sum(1 for token in tokens if not token.isalnum())
    bare = any(not any(c.isalnum() for c in token) for token in tokens)
    return " " if marked >= 3 and bare and run not in source else run


__all__ = ["carry_links", "source_links"]
