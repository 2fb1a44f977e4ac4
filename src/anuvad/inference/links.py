"""Links and e-mail addresses in an output: each of the source's exactly once, none invented.

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
2. **Each source link once**: a link the output writes twice is kept the first time; a link it
   lost is put back where the first junk stood (where the model tried to write it), else before
   the sentence's final punctuation.
"""

from __future__ import annotations

import re

from anuvad.inference.verbatim import Verbatim, find_spans

# What may be a link in an output: with a scheme or www., an e-mail address, or Latin letters
# and digits with two or more inner full stops (a bare domain, or the junk a model writes).
_LINKISH = re.compile(
    r"(?:https?://|www\.)[^\s<>\"']*"
    r"|[A-Za-z0-9._%+-]*[A-Za-z0-9]@[A-Za-z0-9.-]+"
    r"|(?<![\w.])(?=[\w@.-]*[A-Za-z])[A-Za-z0-9@_-]*(?:\.[A-Za-z0-9@_-]+){2,}\.?"
    r"|(?<=[\u0900-\u097f])(?:\.[A-Za-z]+)+\.?",  # glued to a Devanagari word: "परम्परा.in.ine"
)
_FINAL = re.compile(r"[\s।.!?|\"'”’)\]]*$")
_LINKS = Verbatim(numbers=False)
# A space left before the final mark where junk was cut out ("139 या https://… ।" keeps it:
# after a link, the mark would read as part of the address).
_SPACE_BEFORE_END = re.compile(r"(?<=[^\s\w/@.-]|[\u0900-\u097f]) +([।.!?]+)$")


def carry_links(text: str, source: str) -> str:
    """``text`` (a translation of ``source``) with the source's links and e-mail addresses
    exactly once each and no other link-like text (see the module docstring)."""
    links = list(dict.fromkeys(source[s.start : s.end] for s in find_spans(source, _LINKS)))
    if not links and not _LINKISH.search(text):
        return text
    kept: set[str] = set()
    out: list[str] = []
    pos, gap = 0, -1
    for match in _LINKISH.finditer(text):
        found = match.group()
        link = next((k for k in sorted(links, key=len, reverse=True) if found.startswith(k)), None)
        out.append(text[pos : match.start()])
        if link is not None and link not in kept:
            kept.add(link)
            out.append(link)
        elif link is None and found.rstrip(".") in source:
            out.append(found)  # a dotted word of the source ("U.S.", "e.g.")
        elif gap < 0:
            gap = len("".join(out))
        pos = match.end()
    out.append(text[pos:])
    cleaned = "".join(out)
    missing = [link for link in links if link not in kept and link not in cleaned]
    if missing:
        at = gap if gap >= 0 else _FINAL.search(cleaned).start()  # type: ignore[union-attr]
        before, after = cleaned[:at].rstrip(), cleaned[at:].lstrip()
        glue = " " if after and after[0].isalnum() else ""
        cleaned = " ".join([before, *missing]).strip() + glue + after
    cleaned = re.sub(r" {2,}", " ", cleaned).strip()
    return _SPACE_BEFORE_END.sub(r"\1", cleaned)


__all__ = ["carry_links"]
