"""The cells of a line: a table's columns, each translated on its own.

A tab always separates cells ("1<TAB>The train is late."). So does a pipe in a Markdown table
row ("| Delhi | 3.2 crore |") and, between spaces, a pipe in a line of a language that does not
type "|" for the danda ("Home | About Us | Contact", "Price: ₹500 | Size: M"): given whole, the
model dropped the pipes and some of the words between them ("घर के बारे में जानकारी"). In a
Devanagari language "|" outside a table row is the danda typed on a keyboard without one
("आज मौसम अच्छा है | हम पार्क जाएंगे |"), so it ends a sentence instead
(:mod:`anuvad.inference.sentences`).

Lettered options on one line are cells too ("A) हाँ B) नहीं", "Do you agree? (a) yes (b) no"):
given whole, "A) हाँ B) नहीं" came out "A) No B". Only where the line begins with the first
option, or with a question or label before it ("?" or ":"), and every option is short (at most
eight words): "(a) a dog and (b) a cat" inside a sentence stays one sentence.
"""

from __future__ import annotations

import re

from anuvad.data.cleaning import SCRIPTS

TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a Markdown table row, its outer pipes included
TABLE_RULE = re.compile(r"^\s*\|(?:\s*:?-+:?\s*\|)+\s*$")  # "|---|:--:|": layout, no cells
ROW_CELLS = re.compile(r"[\t|]")  # between the cells of a table row
SPACED_PIPE_CELLS = re.compile(r"\t|(?<= )\|(?= )")  # a tab, or a pipe between spaces
TAB_CELLS = re.compile(r"\t")
# Options "A) … B) …" (or "(a) … (b) …", one case): the line, and before each later option.
OPTION_LINES = {
    case: re.compile(
        rf"^(?:[^\t]*[?:]\s+)?\(?{a}\)\s+(?:\S+\s+){{0,7}}?\(?{b}\)\s+\S+(?:\s+\S+){{0,7}}"
        rf"(?:\s+\(?[{c}]\)\s+\S+(?:\s+\S+){{0,7}})*\s*$"
    )
    for case, (a, b, c) in {"upper": ("A", "B", "C-H"), "lower": ("a", "b", "c-h")}.items()
}
OPTIONS = {
    "upper": re.compile(r"(?<=\s)(?=\(?[A-H]\)\s)"),
    "lower": re.compile(r"(?<=\s)(?=\(?[a-h]\)\s)"),
}


def pipe_is_danda(lang: str) -> bool:
    """Whether ``lang``'s text types "|" for the danda (a Devanagari language)."""
    return SCRIPTS.get(lang) == SCRIPTS["hi"]


def cell_separator(line: str, lang: str, whole: str | None = None) -> re.Pattern[str]:
    """What separates the cells of ``line`` in a ``lang`` document (module docstring);
    ``whole``: the full line whose rest after a list marker ``line`` is (its options)."""
    if TABLE_ROW.match(line):
        return ROW_CELLS
    for case, options in OPTION_LINES.items():
        if options.match(whole or line):
            return OPTIONS[case]
    return TAB_CELLS if pipe_is_danda(lang) else SPACED_PIPE_CELLS


def cell_spans(line: str, lang: str, whole: str | None = None) -> list[tuple[int, int]]:
    """(start, end) of each cell of ``line``, in order, separators left out (a table row's
    outer pipes give empty cells at its ends; the rule under a table's head has none);
    ``whole``: the full line where ``line`` is its rest after a list marker (options: "A) हाँ
    B) नहीं" without its "A) "), which decides what separates the cells."""
    if TABLE_RULE.match(line):
        return []
    spans, start = [], 0
    for separator in cell_separator(line, lang, whole).finditer(line):
        spans.append((start, separator.start()))
        start = separator.end()
    spans.append((start, len(line)))
    return spans
