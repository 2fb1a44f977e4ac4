"""The cells of a line: a table's columns, each translated on its own.

A tab always separates cells ("1<TAB>The train is late."). So does a pipe in a Markdown table
row ("| Delhi | 3.2 crore |") and, between spaces, a pipe in a line of a language that does not
type "|" for the danda ("Home | About Us | Contact", "Price: ₹500 | Size: M"): given whole, the
model dropped the pipes and some of the words between them ("घर के बारे में जानकारी"). In a
Devanagari language "|" outside a table row is the danda typed on a keyboard without one
("आज मौसम अच्छा है | हम पार्क जाएंगे |"), so it ends a sentence instead
(:mod:`anuvad.inference.sentences`).
"""

from __future__ import annotations

import re

from anuvad.data.cleaning import SCRIPTS

TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")  # a Markdown table row, its outer pipes included
TABLE_RULE = re.compile(r"^\s*\|(?:\s*:?-+:?\s*\|)+\s*$")  # "|---|:--:|": layout, no cells
ROW_CELLS = re.compile(r"[\t|]")  # between the cells of a table row
SPACED_PIPE_CELLS = re.compile(r"\t|(?<= )\|(?= )")  # a tab, or a pipe between spaces
TAB_CELLS = re.compile(r"\t")


def pipe_is_danda(lang: str) -> bool:
    """Whether ``lang``'s text types "|" for the danda (a Devanagari language)."""
    return SCRIPTS.get(lang) == SCRIPTS["hi"]


def cell_separator(line: str, lang: str) -> re.Pattern[str]:
    """What separates the cells of ``line`` in a ``lang`` document (module docstring)."""
    if TABLE_ROW.match(line):
        return ROW_CELLS
    return TAB_CELLS if pipe_is_danda(lang) else SPACED_PIPE_CELLS


def cell_spans(line: str, lang: str) -> list[tuple[int, int]]:
    """(start, end) of each cell of ``line``, in order, separators left out (a table row's
    outer pipes give empty cells at its ends; the rule under a table's head has none)."""
    if TABLE_RULE.match(line):
        return []
    spans, start = [], 0
    for separator in cell_separator(line, lang).finditer(line):
        spans.append((start, separator.start()))
        start = separator.end()
    spans.append((start, len(line)))
    return spans
