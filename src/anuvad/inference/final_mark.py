"""A sentence's final punctuation, and putting words before it: where a repair puts what the
search left out (a number, a link, a symbol) when it has no better place ("… है" + ["139"] →
"… है 139।"). Shared by the repairs after the search and by the page's rules
(:mod:`anuvad.web.text_rules`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

FINAL = re.compile(r"[\s।.!?|\"'”’)\]]*$")  # a sentence's final marks and closing quotes
SPACES = re.compile(r"[ \t]{2,}")  # where a repair took a word out between two spaces
SPACE_BEFORE_MARK = re.compile(r" +(?=[।.!?,])")  # where a mark stood before punctuation


def before_final_mark(text: str, words: Sequence[str]) -> str:
    """``text`` with ``words`` put before its final punctuation and closing quotes ("… है" +
    ["139"] → "… है 139।")."""
    end = FINAL.search(text)
    cut = end.start() if end is not None else len(text)
    return " ".join(p for p in [text[:cut].rstrip(), *words] if p) + text[cut:].lstrip()


__all__ = ["FINAL", "SPACES", "SPACE_BEFORE_MARK", "before_final_mark"]
