"""A Word or PowerPoint paragraph whose runs differ in formatting (a bold word, a link in a
sentence), as a :class:`~anuvad.inference.inline.Block`: each run is an inline element, so the
translation's words take the formatting of the source words they came from, as HTML's inline
elements do (:mod:`anuvad.inference.inline`). An OpenDocument paragraph is closer still to
HTML: its text stands in the paragraph, with spans and links around some of it
(:func:`span_block`).

Only a paragraph piece of plain runs is read so: each run holds its properties (``w:rPr`` /
``a:rPr``) and one text element, and between runs there is nothing but hyperlinks around runs,
bookmarks and proofing marks. Anything else (a field, a drawing, a comment anchor, a run with
a tab inside) leaves the piece to the simpler rule of :mod:`anuvad.inference.office_xml` (the
whole translation in the run with most of the text), as does a piece whose runs all look alike.
Bookmarks are kept, at the start of the piece; proofing marks (Word's spelling state) are
dropped, as Word drops them when the text changes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from anuvad.inference.inline import TAG_REST, Block, Element, Stack

_TAG = re.compile(rf"<(/?)([\w.-]+(?::[\w.-]+)?){TAG_REST}(?<!/)(/?)>", re.DOTALL)


@dataclass(frozen=True)
class RunNames:
    """A dialect's run elements, by the dialect's prefixes."""

    run: str  # "w:r"
    properties: str  # "w:rPr"
    text: str  # "w:t"
    hyperlink: str = ""  # "w:hyperlink" (DrawingML keeps its links in the run's properties)
    kept: frozenset[str] = frozenset()  # empty elements kept, at the piece's start
    dropped: frozenset[str] = frozenset()  # empty elements dropped
    preserve: bool = False  # the text element needs xml:space="preserve" to keep edge spaces


WORD_RUNS = RunNames(
    "w:r",
    "w:rPr",
    "w:t",
    "w:hyperlink",
    kept=frozenset({"w:bookmarkStart", "w:bookmarkEnd"}),
    dropped=frozenset({"w:proofErr"}),
    preserve=True,
)
DRAWING_RUNS = RunNames("a:r", "a:rPr", "a:t")
EXCEL_RUNS = RunNames("x:r", "x:rPr", "x:t", preserve=True)  # a cell's rich text


@dataclass
class RunBlock:
    """A paragraph piece's runs as a block, and where they are in the part.

    Attributes:
        block: the piece's text with its runs (and hyperlinks) as elements.
        first: the index of the first token of the runs.
        last: the index of the last.
        kept: markup kept, written before the translated runs.
    """

    block: Block
    first: int
    last: int
    kept: list[str] = field(default_factory=list)


def run_block(
    tokens: list[str], text_tokens: list[int], names: RunNames, name_of: Callable[[str], str]
) -> RunBlock | None:
    """The runs holding ``text_tokens`` (a piece's character data, in order) as a block, or
    None when they are not plain runs or all look alike.

    Args:
        tokens: the part's tokens.
        text_tokens: the indices of the piece's text tokens.
        names: the dialect's run elements.
        name_of: a raw tag name → the dialect's name for it (prefixes mapped).
    """
    runs: list[tuple[int, int, int]] = []  # (run start, text start tag, run end) per token
    for index in text_tokens:
        found = _plain_run(tokens, index, names, name_of)
        if found is None:
            return None
        runs.append(found)
    block = Block(loose_text=False)
    kept: list[str] = []
    stack: Stack = ()
    looks: set[str] = set()
    position = runs[0][0]
    while position > 0 and _opens_link(tokens[position - 1], names, name_of):
        position -= 1  # a link (or several) that opens right before the first run
    first = position
    for (start, text_tag, end), index in zip(runs, text_tokens, strict=True):
        for between in range(position, start):  # what lies between two runs
            stack_or_none = _between(tokens[between], names, name_of, block, stack, kept)
            if stack_or_none is None:
                return None
            stack = stack_or_none
        text_start = _preserving(tokens[text_tag]) if names.preserve else tokens[text_tag]
        properties = tokens[start:text_tag]
        if names.preserve:  # Word: the translation may be in a complex script (Devanagari)
            with_complex_script(properties, 0, len(properties), name_of)
        opening = "".join(properties) + text_start
        looks.add("".join(tokens[start + 1 : text_tag]))
        run_stack = block.open(Element(opening, "".join(tokens[index + 1 : end + 1])), stack)
        block.append(html.unescape(tokens[index]), run_stack)
        position = end + 1
    last = runs[-1][2]
    while (
        stack
        and last + 1 < len(tokens)
        and _name(tokens[last + 1], name_of)
        == (
            names.hyperlink,
            True,
        )
    ):  # the links that close right after the last run
        last += 1
        stack = _between(tokens[last], names, name_of, block, stack, kept) or ()
    links = len(block.elements) > len(runs)
    if stack or (len(looks) < 2 and not links):
        return None  # a hyperlink left open, or runs that all look alike: nothing to carry
    return RunBlock(block, first, last, kept)


def _opens_link(token: str, names: RunNames, name_of: Callable[[str], str]) -> bool:
    return bool(names.hyperlink) and _name(token, name_of) == (names.hyperlink, False)


# OpenDocument: the inline elements, and the empty ones a paragraph may hold between them
_SPANS = frozenset({"text:span", "text:a"})
_KEPT_MARKS = frozenset({"text:bookmark", "text:bookmark-start", "text:bookmark-end"})
_DROPPED_MARKS = frozenset({"text:soft-page-break"})
_ODF_SPACE = re.compile(r"[ \t\r\n]+")


def span_block(
    tokens: list[str], start: int, end: int, name_of: Callable[[str], str]
) -> RunBlock | None:
    """An OpenDocument paragraph's content (the tokens between its start tag ``start`` and its
    end tag ``end``) as a block of spans and links, when it holds nothing else but text,
    spaces (``text:s``), bookmarks and soft page breaks, and a span or a link; else None.
    White space collapses as OpenDocument reads it."""
    block = Block()
    kept: list[str] = []
    stack: Stack = ()
    for token in tokens[start + 1 : end]:
        name, closing = _name(token, name_of)
        if not token.startswith("<") or name == "text:s":
            count = re.search(r"""\bc\s*=\s*["'](\d+)["']""", token) if name else None
            text = " " * int(count.group(1) if count else 1) if name else html.unescape(token)
            text = _ODF_SPACE.sub(" ", text)
            block.append(text.lstrip(" ") if block.text.endswith(" ") else text, stack)
        elif name in _SPANS and closing:
            if not stack:
                return None
            element = stack[-1]
            block.elements[element] = Element(block.elements[element].start, token)
            stack = stack[:-1]
        elif name in _SPANS and not token.endswith("/>"):
            stack = block.open(Element(token, ""), stack)
        elif token.endswith("/>") and name in _KEPT_MARKS:
            kept.append(token)
        elif not (token.endswith("/>") and name in _DROPPED_MARKS):
            return None
    if stack or not block.elements or block.glued():
        return None
    return RunBlock(block, start + 1, end - 1, kept)


def _plain_run(
    tokens: list[str], index: int, names: RunNames, name_of: Callable[[str], str]
) -> tuple[int, int, int] | None:
    """(run start, text start tag, run end) of a text token in a plain run: ``<r>``, its
    properties, ``<t>``, the text, ``</t>``, ``</r>``; None otherwise."""
    holder = index - 1
    if holder < 0 or _name(tokens[holder], name_of) != (names.text, False):
        return None
    if index + 2 >= len(tokens) or _name(tokens[index + 1], name_of) != (names.text, True):
        return None
    if _name(tokens[index + 2], name_of) != (names.run, True):
        return None
    start = holder - 1
    if _name(tokens[start], name_of) == (names.properties, True):  # </rPr>: back to its start
        depth = 0
        while start >= 0:
            name = _name(tokens[start], name_of)
            if name == (names.properties, True):
                depth += 1
            elif name == (names.properties, False) and not tokens[start].endswith("/>"):
                depth -= 1
                if depth == 0:
                    break
            start -= 1
        start -= 1
    elif _name(tokens[start], name_of) == (names.properties, False):  # <rPr/>
        start -= 1
    if any(_name(tokens[i], name_of)[0].endswith("rPrChange") for i in range(start + 1, holder)):
        return None  # a tracked formatting change: its id must stay unique, the run whole
    if start < 0 or _name(tokens[start], name_of) != (names.run, False):
        return None
    if tokens[start].endswith("/>"):
        return None
    return start, holder, index + 2


def _between(
    token: str,
    names: RunNames,
    name_of: Callable[[str], str],
    block: Block,
    stack: Stack,
    kept: list[str],
) -> Stack | None:
    """What a token between two runs does: opens or closes a hyperlink (the new stack), is
    kept or dropped (the same stack); None for anything else."""
    if not token.startswith("<"):
        return stack if not token.strip() else None
    name, closing = _name(token, name_of)
    if names.hyperlink and name == names.hyperlink:
        if closing:
            if not stack:
                return None
            element = stack[-1]
            block.elements[element] = Element(block.elements[element].start, token)
            return stack[:-1]
        return block.open(Element(token, ""), stack)
    if token.endswith("/>") and name in names.kept:
        kept.append(token)
        return stack
    if token.endswith("/>") and name in names.dropped:
        return stack
    return None


def _name(token: str, name_of: Callable[[str], str]) -> tuple[str, bool]:
    """A tag's name (the dialect's) and whether it is an end tag; ("", False) for text."""
    match = _TAG.match(token)
    if match is None or not token.startswith("<"):
        return "", False
    return name_of(match.group(2)), bool(match.group(1))


# Word formats complex-script text (Devanagari, Arabic) by its own properties: a bold run's
# Hindi is bold only with <w:bCs/> beside <w:b/>. Each twin follows its property, as the
# schema's order has it.
_COMPLEX_TWINS = {"w:b": "bCs", "w:i": "iCs", "w:sz": "szCs"}


def with_complex_script(
    tokens: list[str], start: int, end: int, name_of: Callable[[str], str]
) -> None:
    """Each run property among ``tokens[start:end]`` that has a complex-script twin and lacks
    it gets it, right after (``<w:b/>`` → ``<w:b/><w:bCs/>``; ``<w:sz w:val="28"/>`` gets
    ``<w:szCs w:val="28"/>``), in place."""
    for i in range(start, end):  # the recorded old formatting of a tracked change: not ours
        if _name(tokens[i], name_of) == ("w:rPrChange", False):
            end = i
            break
    present = {_name(tokens[i], name_of)[0] for i in range(start, end)}
    for i in range(start, end):
        match = _TAG.match(tokens[i])
        if match is None or match.group(1) or not tokens[i].endswith("/>"):
            continue
        twin = _COMPLEX_TWINS.get(name_of(match.group(2)))
        if twin is None or f"w:{twin}" in present:
            continue
        prefix = match.group(2).rpartition(":")[0]
        raw_twin = f"{prefix}:{twin}" if prefix else twin
        tokens[i] += "<" + raw_twin + tokens[i][1 + len(match.group(2)) :]


def run_start(tokens: list[str], holder: int, name_of: Callable[[str], str]) -> int | None:
    """The index of the start tag of the Word run whose text element starts at ``holder``."""
    for i in range(holder - 1, -1, -1):
        name, closing = _name(tokens[i], name_of)
        if name == "w:r" and not closing:
            return i
        if name in ("w:p", "w:t") or (name == "w:r" and closing):
            return None
    return None


def _preserving(start_tag: str) -> str:
    """A text element's start tag that keeps the white space of its text."""
    if "xml:space" in start_tag or start_tag.endswith("/>"):
        return start_tag
    return start_tag[:-1] + ' xml:space="preserve">'


__all__ = [
    "DRAWING_RUNS",
    "EXCEL_RUNS",
    "WORD_RUNS",
    "RunBlock",
    "RunNames",
    "run_block",
    "run_start",
    "span_block",
    "with_complex_script",
]
