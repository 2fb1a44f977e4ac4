"""Inline markup carried across a translation: "Visit <b>Delhi</b> today" is translated as one
sentence and comes back as "आज <b>दिल्ली</b> जाएँ", the bold around the word that came from
"Delhi" (issue 34's HTML kept every tag but cut the sentence at each one).

A :class:`Block` is a stretch of text with inline elements in it (bold, a link, a span):
its plain text, and for every character the elements around it (a stack, outermost first).
Its translation is placed word by word: each target word takes the elements around the source
word it came from (:mod:`anuvad.inference.alignment`; without an alignment, the word at the
same relative place); an element stays on one stretch of words (its largest group, with a word
between two of its words taken in); an element no word came back in wraps the translated word
nearest to where it was, so no markup is ever dropped. The white space between two words sits
in the elements both share, and the markup is written by opening and closing elements as the
stacks change, so it is always well nested. This is the word-alignment approach of Marian's
and Bergamot's HTML translation, with attention instead of a trained alignment.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from anuvad.inference.alignment import diagonal

Stack = tuple[int, ...]  # the elements around a character, outermost first (indices)
# What follows a tag's name up to its ">": a quoted attribute value may hold ">" (HTML and XML
# both allow it), so the tag ends at the first ">" outside a value's quotes; a quote starts a
# value only right after "=" (as HTML reads ``alt=don't``). No "<" anywhere (XML allows none in
# a value; an HTML value holding one is left to the caller's plain ``[^>]*`` reading), so a
# quote that does not close stops at the next tag and every attempt ends there: one pass over
# the text. Written as an unrolled loop (plain runs, then each "=" with its value): one way to
# match any text.
TAG_REST = r"""[^<>=]*(?:(?:=\s*"[^"<]*"|=\s*'[^'<]*'|=(?!\s*["']))[^<>=]*)*"""
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Element:
    """An inline element as written: its start and end tags."""

    start: str
    end: str


@dataclass
class Block:
    """Plain text with inline elements in it.

    Attributes:
        text: the text, as it is translated.
        stacks: for each character of ``text``, the elements around it.
        elements: the elements, by index.
        chains: for each element, the stack it opens (its ancestors, then itself).
        places: for each element, the offset in ``text`` where it opens.
        loose_text: text may stand outside the elements (HTML); False: all text is inside
            the innermost (a Word run), so a space between two words sits in one of theirs
            (the plainer run's: a bold run ends at its word).
    """

    loose_text: bool = True
    text: str = ""
    stacks: list[Stack] = field(default_factory=list)
    elements: list[Element] = field(default_factory=list)
    chains: list[Stack] = field(default_factory=list)
    places: list[int] = field(default_factory=list)

    def append(self, text: str, stack: Stack) -> None:
        """``text`` added at the end, inside ``stack``."""
        self.text += text
        self.stacks.extend([stack] * len(text))

    def glued(self) -> bool:
        """Whether an element sits inside a word, so that words cannot carry it: between two
        letters or digits ("H<sub>2</sub>O", "<b>Java</b>Script"), or a mark without letters
        stuck to a word or a mark ("Paris<sup>[1]</sup>", "big.<sup>[1]</sup>"). A link
        before a full stop ("<a>Delhi</a>.") is not glued, nor an element without letters that
        stands as a word of its own before punctuation ("Pay <b>₹499</b>.": the sentence was
        cut before it)."""
        spans: dict[int, list[int]] = {}  # element -> [first, last] character inside it
        for i, stack in enumerate(self.stacks):
            for element in stack:
                spans.setdefault(element, [i, i])[1] = i
        text = self.text
        for start, last in spans.values():
            letters = any(c.isalpha() for c in text[start : last + 1])
            # Without letters, a word of its own (after a space or at the start) may be
            # followed by punctuation; touching anything on its left, it is a word's mark.
            alone = start == 0 or text[start - 1].isspace()
            for left, right in ((start - 1, start), (last, last + 1)):
                if left < 0 or right >= len(text) or text[left].isspace() or text[right].isspace():
                    continue
                if (not letters and (not alone or text[right].isalnum())) or (
                    text[left].isalnum() and text[right].isalnum()
                ):
                    return True
        return False

    def open(self, element: Element, around: Stack) -> Stack:
        """``element`` opened here, inside ``around``; the stack inside it."""
        self.elements.append(element)
        self.chains.append((*around, len(self.elements) - 1))
        self.places.append(len(self.text))
        return self.chains[-1]


@dataclass(frozen=True)
class PlacedSentence:
    """One translated sentence of a block.

    Attributes:
        start: offset of its first character in the block's text.
        end: offset just after it.
        text: its translation.
        alignment: for each word of ``text``, the index of the sentence's source word it came
            from (None: not known; word order is used).
    """

    start: int
    end: int
    text: str
    alignment: list[int] | None = None


@dataclass(frozen=True)
class UnitTranslation:
    """A unit's translation: its text, and (for a unit with inline elements) its sentences'
    places in the unit's text, translations and word alignments."""

    text: str
    sentences: Sequence[PlacedSentence] = ()

    @property
    def aligned(self) -> bool:
        """Whether it has sentences and each has its word alignment."""
        return bool(self.sentences) and all(s.alignment is not None for s in self.sentences)


def render(block: Block, sentences: Sequence[PlacedSentence]) -> str:
    """The block's translation as markup: each sentence's translation in place of its source
    (what lies between sentences as it is), every element of the block in it, well nested.

    Args:
        block: the source block.
        sentences: its translated sentences, in order, not overlapping.

    Returns:
        The translated markup, text escaped.
    """
    units: list[tuple[str, Stack]] = []
    position = 0
    for i, sentence in enumerate(sentences):
        units.extend(_as_written(block, position, sentence.start))
        if i and sentence.start == position and sentence.text and units:
            # two sentences written with nothing between ("came.Sita went."): a space, as
            # documents.assemble puts one
            units.append((" ", units[-1][1]))
        units.extend(_placed(block, sentence))
        position = sentence.end
    units.extend(_as_written(block, position, len(block.text)))
    _keep_every_element(block, units)
    return _markup(block, units)


def _as_written(block: Block, start: int, end: int) -> list[tuple[str, Stack]]:
    """The source between two sentences, character by character in its own elements."""
    return [(block.text[i], block.stacks[i]) for i in range(start, end)]


def _word_stack(block: Block, start: int, end: int) -> Stack:
    """The elements around most of a source word's characters (the first such stack)."""
    counts: dict[Stack, int] = {}
    for stack in block.stacks[start:end]:
        counts[stack] = counts.get(stack, 0) + 1
    return max(counts, key=lambda s: (counts[s], -block.stacks[start:end].index(s)))


def _placed(block: Block, sentence: PlacedSentence) -> list[tuple[str, Stack]]:
    """A sentence's translation, word by word in the elements of the source word it came
    from, the white space between two words in what they share."""
    source = [
        (sentence.start + m.start(), sentence.start + m.end())
        for m in _WORD.finditer(block.text[sentence.start : sentence.end])
    ]
    words = list(_WORD.finditer(sentence.text))
    if sentence.start < len(block.stacks):
        first = block.stacks[sentence.start]
    else:  # past the text (not from a splitter): in the last run where text must be in one
        first = block.stacks[-1] if block.stacks and not block.loose_text else ()
    if not words:
        return [(sentence.text, () if block.loose_text else first)] if sentence.text else []
    if not source:
        return [(sentence.text, first)]
    alignment = sentence.alignment
    if alignment is None or len(alignment) != len(words):
        alignment = diagonal(len(source), len(words))
    stacks = [_word_stack(block, *source[min(i, len(source) - 1)]) for i in alignment]
    _pin_copies(block, source, [w.group() for w in words], stacks)
    _one_stretch(stacks, block.chains, strays=block.loose_text)
    if not block.loose_text:
        _inside_a_run(stacks, set(block.stacks))
    units: list[tuple[str, Stack]] = []
    position = 0
    for j, word in enumerate(words):
        if word.start() > position:
            if not block.loose_text:  # in the plainer neighbour (a bold run ends at its word)
                around = stacks[j] if not j else _plainer(block, stacks[j - 1], stacks[j])
            else:
                around = _shared(stacks[j - 1], stacks[j]) if j else ()
            units.append((sentence.text[position : word.start()], around))
        units.extend(_with_punctuation(block, word.group(), stacks, j))
        position = word.end()
    if position < len(sentence.text):
        units.append((sentence.text[position:], () if block.loose_text else stacks[-1]))
    return units


def _pin_copies(
    block: Block, source: list[tuple[int, int]], words: list[str], stacks: list[Stack]
) -> None:
    """In place: a translation word that copies a source word (an address, a number, a name;
    each written once on each side) takes that word's elements, and an element whose every
    word is so copied holds nothing else ("<a href=mailto:…>info@tours.in</a>" came out "<a
    …>info@tours.in के</a> लिए लिखिए।")."""
    source_cores = [_core(block.text[a:b]) for a, b in source]
    cores = [_core(word) for word in words]
    # a word written once on each side (twice, which copy is which is the alignment's to say)
    own = {
        core: _word_stack(block, *span)
        for core, span in zip(source_cores, source, strict=True)
        if core and source_cores.count(core) == 1 and cores.count(core) == 1
    }
    for j, core in enumerate(cores):
        if core in own:
            stacks[j] = own[core]
    inside: dict[int, bool] = {}  # element -> whether every source word in it is pinned
    for core, (a, b) in zip(source_cores, source, strict=True):
        for element in _word_stack(block, a, b):
            inside[element] = inside.get(element, True) and core in own
    for j, core in enumerate(cores):
        if core in own:
            continue
        for depth, element in enumerate(stacks[j]):
            if inside.get(element):
                stacks[j] = stacks[j][:depth]
                break


def _core(word: str) -> str:
    """A word without the punctuation at its edges."""
    return _EDGES.fullmatch(word).group(2)  # type: ignore[union-attr]


# Punctuation at a word's edges: in HTML it stands outside an element that ends or begins at
# the word ("<a>Delhi</a>." stays so), as it mostly does in the source.
_EDGES = re.compile(r"([(\[{\"'“‘«¿¡]*)(.*?)([.,;:!?।॥)\]}\"'”’»…]*)", re.DOTALL)


def _with_punctuation(
    block: Block, word: str, stacks: list[Stack], j: int
) -> list[tuple[str, Stack]]:
    """A word as units: its punctuation at the edges in what it shares with the neighbour
    word (HTML), its core in its own stack."""
    lead, core, trail = _EDGES.fullmatch(word).groups()  # type: ignore[union-attr]
    if not core or not block.loose_text:
        return [(word, stacks[j])]
    before = _shared(stacks[j - 1], stacks[j]) if j else ()
    after = _shared(stacks[j], stacks[j + 1]) if j + 1 < len(stacks) else ()
    units = [(lead, before)] if lead else []
    units.append((core, stacks[j]))
    return units + ([(trail, after)] if trail else [])


def _plainer(block: Block, left: Stack, right: Stack) -> Stack:
    """Of two words' stacks, the one whose elements say less (fewer tags in their start: fewer
    properties; not inside a link); the left one when they say as much."""

    def weight(stack: Stack) -> int:
        said = 0
        for e in stack:  # a run's properties: what lies between its own tag and its text's
            start = block.elements[e].start
            middle = start[start.find(">") + 1 : start.rfind("<")]
            said += middle.count("<") + middle.count("=")
        return said + 10 * (len(stack) - 1)

    return right if weight(right) < weight(left) else left


def _shared(left: Stack, right: Stack) -> Stack:
    common = 0
    while common < min(len(left), len(right)) and left[common] == right[common]:
        common += 1
    return left[:common]


def _one_stretch(stacks: list[Stack], chains: list[Stack], strays: bool = True) -> None:
    """Each element on one stretch of words: of the groups of words it came back on (words at
    most one apart are a group), the largest keeps it, with the words between them that sit
    in its parent ("<b>very hot</b>" with a particle between stays one bold stretch); with
    ``strays``, the other words lose it (a repeated name, a word the attention misplaced far
    away), so an HTML link is not written twice and an element does not spread over half a
    sentence. A Word run keeps its other groups (a word that leaves the plain run it came
    from would take a neighbour's formatting)."""
    for element in sorted({e for s in stacks for e in s}, key=lambda e: (len(chains[e]), e)):
        where = [j for j, s in enumerate(stacks) if element in s]
        if not where:
            continue  # lost with an outer element's stray group
        outer = chains[element][:-1]
        groups: list[list[int]] = [[where[0]]]
        for j in where[1:]:  # one word between, sitting in the parent: the same group
            if j - groups[-1][-1] <= 2 and all(
                stacks[k] == outer for k in range(groups[-1][-1] + 1, j)
            ):
                groups[-1].append(j)
            else:
                groups.append([j])
        largest: list[int] = max(groups, key=len)  # the first of the largest
        kept = set(largest)
        for j in where:
            if j not in kept and strays:
                stacks[j] = outer
        for group in [sorted(kept)] if strays else groups:
            for j in range(group[0] + 1, group[-1]):
                if stacks[j] == outer:
                    stacks[j] = chains[element]


def _inside_a_run(stacks: list[Stack], valid: set[Stack]) -> None:
    """A word that lost its element (a stray group) in a block whose text must be inside one
    takes its left neighbour's (else its right's) stack: no word is written outside a run."""
    for j in range(len(stacks)):
        if stacks[j] not in valid:
            near = [stacks[k] for k in (*range(j - 1, -1, -1), *range(j + 1, len(stacks)))]
            stacks[j] = next((s for s in near if s in valid), next(iter(valid)))


def _keep_every_element(block: Block, units: list[tuple[str, Stack]]) -> None:
    """An element that no unit carries (outermost first) wraps the translated word nearest to
    where it stood (by relative place) among the words sitting directly in its parent; else,
    and when it wrapped no text or only white space, it wraps nothing, nearest its place where
    its parent is open. Markup is never dropped, and a parent is not opened twice for it."""
    carried = {e for _, stack in units for e in stack}
    visible = {
        e
        for c, stack in zip(block.text, block.stacks, strict=True)
        if not c.isspace()
        for e in stack
    }
    for element in sorted(range(len(block.elements)), key=lambda e: (len(block.chains[e]), e)):
        if element in carried:
            continue
        target = block.chains[element]
        share = block.places[element] / max(1, len(block.text))
        fits = [] if element not in visible else [
            i for i, (text, stack) in enumerate(units) if text.strip() and stack == target[:-1]
        ]  # fmt: skip
        if fits:
            nearest = _nearest(fits, len(units), share)
            units[nearest] = (units[nearest][0], target)
        else:  # between two units, inside its parent, splitting no other element
            places = [i for i in range(len(units) + 1) if _fits_between(units, i, target[:-1])]
            units.insert(_nearest(places or [len(units)], len(units), share), ("", target))
        carried.add(element)


def _fits_between(units: list[tuple[str, Stack]], i: int, parent: Stack) -> bool:
    """Whether an element whose parent chain is ``parent`` can open and close between units
    ``i - 1`` and ``i``: the parent open there, and nothing else open across."""
    before = units[i - 1][1] if i else ()
    after = units[i][1] if i < len(units) else ()
    across = _shared(before, after)
    inside = before[: len(parent)] == parent or after[: len(parent)] == parent
    return inside and len(across) <= len(parent) and across == parent[: len(across)]


def _nearest(indices: Sequence[int], count: int, share: float) -> int:
    """The index whose relative place among ``count`` units is nearest ``share``."""
    return min(indices, key=lambda i: abs(i / max(1, count) - share))


def _markup(block: Block, units: list[tuple[str, Stack]]) -> str:
    """The units as markup: elements opened and closed as the stacks change."""
    out: list[str] = []
    current: Stack = ()
    for text, stack in units:
        common = len(_shared(current, stack))
        out.extend(block.elements[e].end for e in reversed(current[common:]))
        out.extend(block.elements[e].start for e in stack[common:])
        out.append(html.escape(text, quote=False))
        current = stack
    out.extend(block.elements[e].end for e in reversed(current))
    return "".join(out)


__all__ = ["Block", "Element", "PlacedSentence", "Stack", "UnitTranslation", "render"]
