"""Subtitles in, subtitles out: SubRip (``.srt``) and WebVTT (``.vtt``), each cue's timing,
number and settings as they were, its text translated.

A sentence often runs over two or three cues ("I was going to" / "the market."): a cue whose
text does not end a sentence is translated together with the cues that follow until one does
(three at most), and the translation is shared among them in proportion to their source text,
cut at spaces, so each cue keeps a part of its length on screen for its time. A cue's text that
took two lines is written on two, cut at the space nearest its middle; a dialogue cue (each
line begun by a dash, "- Hi." / "- Hello.") has each line translated alone, in its place.
Formatting tags that wrap a whole cue (``<i>...</i>``, a WebVTT voice ``<v Anna>``) are kept
around its translation; tags inside a cue's text are dropped (their words are translated).
WebVTT's header, notes, styles and regions are kept as written.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

FORMATS = {".srt": "application/x-subrip", ".vtt": "text/vtt"}
_TIMING = re.compile(r"^\s*\d{1,2}:\d{2}(?::\d{2})?[,.]\d{1,3}\s+-->\s+\d{1,2}:\d{2}")
_TAG = re.compile(r"<[^>]*>")
_WRAPPED = re.compile(r"^(<(\w+)(?:[ .][^>]*)?>)(.*)(</\2>)$", re.DOTALL)
_VOICE = re.compile(r"^(<v(?:\.[\w.]+)?\s[^>]*>)(.*)$", re.DOTALL)
_ENDS = re.compile(r"""[.!?।॥…]["'”’)\]]*$""")
MAX_JOINED = 3  # cues translated together, at most
LINE = 42  # characters a subtitle line holds, by common practice


class SubtitleError(ValueError):
    """A file that cannot be read as subtitles: the message names it, the line and the fix."""


@dataclass
class _Cue:
    header: list[str]  # the number (SRT) or identifier (VTT) line, and the timing line
    lines: list[str]  # its text lines, as written
    start: int  # the line (from 1) its text begins on

    @property
    def text(self) -> str:
        return " ".join(_TAG.sub("", line).strip() for line in self.lines).strip()

    @property
    def dialogue(self) -> bool:
        """Two speakers' lines, each begun by a dash ("- Hi." / "- Hello."): each line is
        translated alone."""
        return len(self.lines) > 1 and all(
            _TAG.sub("", line).lstrip().startswith(("-", "–")) for line in self.lines
        )


class Subtitles:
    """A subtitle file, read: its blocks in order, and the cues' texts grouped into sentences."""

    def __init__(self, blocks: list[_Cue | str], newline: str) -> None:
        self._blocks = blocks
        self._newline = newline
        cues = [b for b in blocks if isinstance(b, _Cue) and b.text]
        self._groups: list[list[_Cue]] = []
        self._lines: dict[int, int] = {}  # a dialogue line's group → its cue line
        for cue in cues:
            last = self._groups[-1] if self._groups else None
            if cue.dialogue:
                for k, line in enumerate(cue.lines):
                    if _TAG.sub("", line).strip():
                        self._lines[len(self._groups)] = k
                        self._groups.append([cue])
            elif (
                last
                and len(last) < MAX_JOINED
                and not last[-1].dialogue
                and not _ENDS.search(last[-1].text)
            ):
                last.append(cue)
            else:
                self._groups.append([cue])

    def texts(self) -> list[str]:
        """The texts to translate: each a cue's text, a sentence run over several cues, or a
        dialogue cue's line."""
        return [
            _TAG.sub("", group[0].lines[self._lines[g]]).strip()
            if g in self._lines
            else " ".join(cue.text for cue in group)
            for g, group in enumerate(self._groups)
        ]

    def places(self) -> list[str]:
        """Where each of :meth:`texts` is: "line 12" (where its first cue's text begins)."""
        return [f"line {group[0].start}" for group in self._groups]

    def inline(self) -> list[bool]:
        """No text holds inline formatting a word alignment would place (tags inside a cue
        are dropped)."""
        return [False] * len(self._groups)

    def translated(self, translations: Sequence[str]) -> str:
        """The file with each text's translation shared among its cues."""
        if len(translations) != len(self._groups):
            raise ValueError(f"{len(self._groups)} texts, {len(translations)} translations")
        done: dict[int, list[str]] = {}
        for g, (group, translation) in enumerate(zip(self._groups, translations, strict=True)):
            if g in self._lines:  # a dialogue line: in its place among the cue's lines
                cue = group[0]
                lines = done.setdefault(id(cue), list(cue.lines))
                lines[self._lines[g]] = translation.strip()
                continue
            parts = _shared(translation, [len(cue.text) for cue in group])
            for cue, part in zip(group, parts, strict=True):
                done[id(cue)] = _written(cue, part)
        out: list[str] = []
        for block in self._blocks:
            if isinstance(block, str):
                out.append(block)
            else:
                out.append(self._newline.join([*block.header, *done.get(id(block), block.lines)]))
        return (self._newline * 2).join(out) + self._newline


def is_subtitles(name: str) -> bool:
    """Whether ``name``'s extension is one of :data:`FORMATS`."""
    return PurePosixPath(name).suffix.lower() in FORMATS


def read_subtitles(text: str, name: str) -> Subtitles:
    """The subtitles ``text`` (a BOM taken off), of the format ``name``'s extension says.

    Raises:
        SubtitleError: no cue, or a block without a timing line where one must be (naming the
            line).
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
            blocks.append(_block(chunk, number, vtt, name))
            chunk = []
    if not any(isinstance(b, _Cue) for b in blocks):
        kind = "WebVTT" if vtt else "SubRip"
        raise SubtitleError(
            f"{name}: no subtitle cue found (a {kind} cue is a timing line "
            "'00:00:01,000 --> 00:00:03,000' followed by its text); is it a subtitle file?"
        )
    return Subtitles(blocks, newline)


def _block(chunk: list[str], number: int, vtt: bool, name: str) -> _Cue | str:
    """One block of lines: a cue, or (WebVTT's header, a NOTE, STYLE or REGION) kept text."""
    timing = next((i for i, line in enumerate(chunk[:2]) if _TIMING.match(line)), None)
    if timing is None:
        if vtt:
            return "\n".join(chunk)  # WEBVTT, NOTE, STYLE, REGION: as written
        raise SubtitleError(
            f"{name}: line {number}: a SubRip cue is its number, a timing line "
            f"'00:00:01,000 --> 00:00:03,000' and its text; found {chunk[0][:40]!r}"
        )
    return _Cue(chunk[: timing + 1], chunk[timing + 1 :], number + timing + 1)


def _shared(translation: str, lengths: list[int]) -> list[str]:
    """``translation`` cut at spaces into ``len(lengths)`` parts, in proportion to them (a part
    left empty only when there are fewer words than parts)."""
    words = translation.split()
    if len(lengths) == 1 or not words:
        return [" ".join(words)] + [""] * (len(lengths) - 1)
    ends = list(itertools.accumulate(len(word) + 1 for word in words))  # characters through k
    total = sum(lengths) or 1
    parts: list[str] = []
    taken, share = 0, 0
    for i, length in enumerate(lengths[:-1]):
        share += length
        goal = share / total * ends[-1]
        low, high = taken + 1, len(words) - (len(lengths) - 1 - i)  # a word for each part after
        cut = (
            min(range(low, high + 1), key=lambda c: abs(ends[c - 1] - goal))
            if low <= high
            else taken
        )
        parts.append(" ".join(words[taken:cut]))
        taken = cut
    parts.append(" ".join(words[taken:]))
    return parts


def _written(cue: _Cue, text: str) -> list[str]:
    """A cue's translated lines: as many as it had (two at most), cut at the space nearest the
    middle, inside the tags that wrapped its whole text."""
    source = "\n".join(cue.lines)
    before = after = ""
    if (wrapped := _WRAPPED.match(source)) is not None and "<" not in wrapped.group(3):
        before, after = wrapped.group(1), wrapped.group(4)
    elif (voice := _VOICE.match(source)) is not None:
        before = voice.group(1)
    if not text:
        return [before + after] if before or after else [""]
    two = len(cue.lines) >= 2 or len(text) > LINE
    spaces = [i for i, c in enumerate(text) if c == " "]
    if not two or not spaces:
        return [before + text + after]
    middle = min(spaces, key=lambda i: abs(i - len(text) / 2))
    return [before + text[:middle], text[middle + 1 :] + after]


__all__ = ["FORMATS", "SubtitleError", "Subtitles", "is_subtitles", "read_subtitles"]
