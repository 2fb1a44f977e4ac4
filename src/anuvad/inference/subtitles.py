"""Subtitles in, subtitles out: SubRip (``.srt``) and WebVTT (``.vtt``), each cue's timing,
number and settings as they were, its text translated.

A sentence often runs over two or three cues ("I was going to" / "the market."): a cue whose
text does not end a sentence is translated together with the cues that follow until one does
(three at most), and the translation is shared among them in proportion to their source text,
cut at spaces, so each cue keeps a part of its length on screen for its time. A cue's text that
took two lines is written on two, cut at the space nearest its middle; a dialogue cue (each
line begun by a dash, "- Hi." / "- Hello.", or by a WebVTT voice ``<v Anna>``) has each line
translated alone, in its place. Cues more than two seconds apart are never joined, nor a cue
that is only a sound in brackets ("[LAUGHS]") with another. Tags that
wrap a whole cue or each of its lines (``<i>...</i>``, a voice) are kept around the
translation; tags inside a line are dropped (their words are translated), and so is a tag
that opens a line and closes inside it ("<c.yellow>सावधान</c> रहें।": kept, it lost its end
tag); WebVTT's character
escapes (``&amp;``) are read and written as such. WebVTT's header, notes, styles and regions
are kept as written; an SRT cue missing the blank line before the next is split at the next
timing line.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

FORMATS = {".srt": "application/x-subrip", ".vtt": "text/vtt"}
_STAMP = r"(?:(\d+):)?(\d{2}):(\d{2})[,.](\d{1,3})"
_TIMING = re.compile(rf"^\s*{_STAMP}\s*-->\s*{_STAMP}")
_TAG = re.compile(r"<[^>]*>")
_EDGE_TAGS = re.compile(r"^((?:<[^/>][^>]*>)*)(.*?)((?:</[^>]*>)*)$", re.DOTALL)


def _name(tag: str) -> str:
    """A tag's element name ("<c.yellow>", "</c>" → "c"; "<v Anna>" → "v")."""
    found = re.match(r"</?([A-Za-z][A-Za-z0-9]*)", tag)
    return found.group(1).lower() if found else ""


_DIALOGUE = re.compile(r"^\s*(?:[-–—]\s*(?=\D)|<v[\s.])")
_ENDS = re.compile(r"""(?:[.!?।॥…]["'”’)\]]*|[♪:])$""")
# A cue that is only a sound or a note in brackets ("[LAUGHS]", "(music)"): joined with the
# next cue's sentence, "[LAUGHS]" / "RAVI: Where is the train?" came out with a politician's
# name; it is translated alone and no sentence runs into or out of it.
_BRACKETED = re.compile(r"^\s*(?:\[[^\]]*\]|\([^)]*\))\s*$")
_VTT_KEPT = ("WEBVTT", "NOTE", "STYLE", "REGION")
MAX_JOINED = 3  # cues translated together, at most
MAX_GAP_S = 2.0  # cues further apart are never joined
LINE = 42  # characters a subtitle line holds, by common practice


class SubtitleError(ValueError):
    """A file that cannot be read as subtitles: the message names it, the line and the fix."""


@dataclass
class _Line:
    """A cue's text line: the tags around it, and its text (tags inside dropped)."""

    before: str
    text: str
    after: str


@dataclass
class _Cue:
    header: list[str]  # the number (SRT) or identifier (VTT) line, and the timing line
    lines: list[str]  # its text lines, as written
    start: int  # the line (from 1) its text begins on
    begin: float  # seconds
    end: float
    vtt: bool

    @property
    def parts(self) -> list[_Line]:
        return [_line(line, self.vtt) for line in self.lines]

    @property
    def text(self) -> str:
        return " ".join(p.text for p in self.parts if p.text).strip()

    @property
    def dialogue(self) -> bool:
        """Speakers' lines, each begun by a dash or a voice: each line translated alone."""
        return len(self.lines) > 1 and all(_DIALOGUE.match(_plain(line)) for line in self.lines)


def _plain(line: str) -> str:
    """A line without its leading tags other than a voice (which marks a speaker)."""
    return re.sub(r"^(?:<(?!v[\s.])[^>]*>)+", "", line)


def _line(line: str, vtt: bool) -> _Line:
    before, middle, after = _EDGE_TAGS.match(line.strip()).groups()  # type: ignore[union-attr]
    # A tag opened at the start that closes inside wraps a word, not the line: it goes with the
    # inner tags ("<c.yellow>सावधान</c> रहें।"), and so does an end tag left without its start.
    inside = [t for t in _TAG.findall(before) if f"</{_name(t)}" in middle and _name(t) != "v"]
    before = "".join(t for t in _TAG.findall(before) if t not in inside)
    opened = {_name(t) for t in _TAG.findall(before)}
    after = "".join(t for t in _TAG.findall(after) if _name(t) in opened)
    text = " ".join(_TAG.sub("", middle).split())
    return _Line(before, html.unescape(text) if vtt else text, after)


class Subtitles:
    """A subtitle file, read: its blocks in order, and the cues' texts grouped into sentences."""

    def __init__(self, blocks: list[_Cue | str], newline: str) -> None:
        self._blocks = blocks
        self._newline = newline
        self._groups: list[list[_Cue]] = []
        self._lines: dict[int, int] = {}  # a dialogue line's group → its line in the cue
        for cue in (b for b in blocks if isinstance(b, _Cue) and b.text):
            last = self._groups[-1] if self._groups else None
            if cue.dialogue:
                for k, part in enumerate(cue.parts):
                    if part.text:
                        self._lines[len(self._groups)] = k
                        self._groups.append([cue])
            elif (
                last
                and len(self._groups) - 1 not in self._lines
                and len(last) < MAX_JOINED
                and not _ENDS.search(last[-1].text)
                and not _BRACKETED.match(last[-1].text)
                and not _BRACKETED.match(cue.text)
                and 0 <= cue.begin - last[-1].end <= MAX_GAP_S
            ):
                last.append(cue)
            else:
                self._groups.append([cue])

    def texts(self) -> list[str]:
        """The texts to translate: each a cue's text, a sentence run over several cues, or a
        dialogue cue's line."""
        return [
            group[0].parts[self._lines[g]].text
            if g in self._lines
            else " ".join(cue.text for cue in group)
            for g, group in enumerate(self._groups)
        ]

    def places(self) -> list[str]:
        """Where each of :meth:`texts` is: "line 12" (where its text begins)."""
        return [
            f"line {group[0].start + self._lines.get(g, 0)}" for g, group in enumerate(self._groups)
        ]

    def inline(self) -> list[bool]:
        """No text holds inline formatting a word alignment would place (tags inside a line
        are dropped)."""
        return [False] * len(self._groups)

    def translated(self, translations: Sequence[str]) -> str:
        """The file with each text's translation shared among its cues."""
        if len(translations) != len(self._groups):
            raise ValueError(f"{len(self._groups)} texts, {len(translations)} translations")
        done: dict[int, list[str]] = {}
        for g, (group, given) in enumerate(zip(self._groups, translations, strict=True)):
            translation = " ".join(given.split())  # one line's worth: no newline inside
            if g in self._lines:  # a dialogue line: in its place among the cue's lines
                cue, k = group[0], self._lines[g]
                part = cue.parts[k]
                lines = done.setdefault(id(cue), list(cue.lines))
                lines[k] = part.before + _escaped(translation or part.text, cue) + part.after
                continue
            shares = _shared(translation, [len(cue.text) for cue in group])
            for cue, share in zip(group, shares, strict=True):
                done[id(cue)] = _written(cue, _escaped(share, cue))
        out: list[str] = []
        for block in self._blocks:
            if isinstance(block, str):
                out.append(block.replace("\n", self._newline))
            else:
                out.append(self._newline.join([*block.header, *done.get(id(block), block.lines)]))
        return (self._newline * 2).join(out) + self._newline


def _escaped(text: str, cue: _Cue) -> str:
    """WebVTT text escaped as its format needs (``&``, ``<``, ``>``); SubRip's as it is."""
    return html.escape(text, quote=False) if cue.vtt else text


def is_subtitles(name: str) -> bool:
    """Whether ``name``'s extension is one of :data:`FORMATS`."""
    return PurePosixPath(name).suffix.lower() in FORMATS


def read_subtitles(text: str, name: str) -> Subtitles:
    """The subtitles ``text`` (a BOM taken off), of the format ``name``'s extension says.

    Raises:
        SubtitleError: no cue, or a block that is no cue where one must be (naming the line).
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    vtt = PurePosixPath(name).suffix.lower() == ".vtt"
    blocks: list[_Cue | str] = []
    number, chunk = 0, list[str]()
    for line_number, line in enumerate([*lines, ""], start=1):
        if line.strip():
            if not chunk:
                number = line_number
            chunk.append(line)
            continue
        if chunk:
            blocks.extend(_blocks(chunk, number, vtt, name))
            chunk = []
    if not any(isinstance(b, _Cue) for b in blocks):
        kind = "WebVTT" if vtt else "SubRip"
        raise SubtitleError(
            f"{name}: no subtitle cue found (a {kind} cue is a timing line "
            "'00:00:01,000 --> 00:00:03,000' followed by its text); is it a subtitle file?"
        )
    return Subtitles(blocks, newline)


def _blocks(chunk: list[str], number: int, vtt: bool, name: str) -> list[_Cue | str]:
    """The cues of a block of lines (several where an SRT file lacks the blank line between
    two), or (WebVTT's header, a NOTE, STYLE or REGION) kept text."""
    if vtt and chunk[0].split(" ")[0].split("\t")[0] in _VTT_KEPT:
        return ["\n".join(chunk)]
    timing = next((i for i, line in enumerate(chunk[:2]) if _TIMING.match(line)), None)
    if timing is None and len(chunk) > 1 and (chunk[0].strip().isdigit() or "->" in chunk[1]):
        raise SubtitleError(  # a cue's number or name, then a line that is not a timing
            f"{name}: line {number + 1}: expected the timing line of the cue "
            f"{chunk[0].strip()[:40]!r}, like '00:00:01,000 --> 00:00:03,000'; found "
            f"{chunk[1][:40]!r} (fix its times or its arrow '-->')"
        )
    if timing is None:
        kind = "a WebVTT cue is an optional name" if vtt else "a SubRip cue is its number"
        raise SubtitleError(
            f"{name}: line {number}: {kind}, a timing line '00:00:01,000 --> 00:00:03,000' and "
            f"its text; found {chunk[0][:40]!r} (put a blank line between cues)"
        )
    # the next timing line inside the block begins another cue (its number on the line before)
    later = next((i for i in range(timing + 1, len(chunk)) if _TIMING.match(chunk[i])), len(chunk))
    cut = later - 1 if later < len(chunk) and chunk[later - 1].strip().isdigit() else later
    cut = max(cut, timing + 1)
    begin, end = (_seconds(g) for g in _groups_of(_TIMING.match(chunk[timing])))
    cue = _Cue(chunk[: timing + 1], chunk[timing + 1 : cut], number + timing + 1, begin, end, vtt)
    if cut == len(chunk):
        return [cue]
    return [cue, *_blocks(chunk[cut:], number + cut, vtt, name)]


def _groups_of(match: re.Match[str] | None) -> list[tuple[str | None, ...]]:
    assert match is not None
    groups = match.groups()
    return [groups[:4], groups[4:]]


def _seconds(stamp: tuple[str | None, ...]) -> float:
    hours, minutes, seconds, fraction = stamp
    whole = int(hours or 0) * 3600 + int(minutes or 0) * 60 + int(seconds or 0)
    return whole + int((fraction or "0").ljust(3, "0")) / 1000


def _shared(translation: str, lengths: list[int]) -> list[str]:
    """``translation`` cut at spaces into ``len(lengths)`` parts, in proportion to them (with
    fewer words than parts, a word each for the first)."""
    words = translation.split()
    if len(words) <= len(lengths):
        return words + [""] * (len(lengths) - len(words))
    ends = list(itertools.accumulate(len(word) + 1 for word in words))  # characters through k
    total = sum(lengths) or 1
    parts: list[str] = []
    taken, share = 0, 0
    for i, length in enumerate(lengths[:-1]):
        share += length
        goal = share / total * ends[-1]
        low, high = taken + 1, len(words) - (len(lengths) - 1 - i)  # a word for each part after
        cut = min(range(low, high + 1), key=lambda c: abs(ends[c - 1] - goal))
        parts.append(" ".join(words[taken:cut]))
        taken = cut
    parts.append(" ".join(words[taken:]))
    return parts


def _written(cue: _Cue, text: str) -> list[str]:
    """A cue's translated lines: as many as it had (two at most), cut at the space nearest the
    middle; each line in the tags that wrapped each source line, or the first and the last in
    those that wrapped the whole cue."""
    parts = cue.parts
    same = len({(p.before, p.after) for p in parts}) == 1
    whole = _EDGE_TAGS.match("\n".join(line.strip() for line in cue.lines))
    first, last = (parts[0].before, parts[0].after) if same else ("", "")
    if not same and whole is not None and "<" not in whole.group(2).replace("<v", ""):
        first, last = whole.group(1), whole.group(3)
    if not text:
        return [first + last] if first or last else [""]
    spaces = [i for i, c in enumerate(text) if c == " "]
    if not (len(cue.lines) >= 2 or len(text) > LINE) or not spaces:
        return [first + text + last]
    middle = min(spaces, key=lambda i: abs(i - len(text) / 2))
    top, bottom = text[:middle], text[middle + 1 :]
    if same and parts[0].before:
        return [first + top + last, first + bottom + last]
    return [first + top, bottom + last]


__all__ = ["FORMATS", "SubtitleError", "Subtitles", "is_subtitles", "read_subtitles"]
