"""Links, e-mail addresses and file names in text: what the translation copies as written
(:mod:`anuvad.inference.verbatim`), what the page copies (``web/text_rules.py``), and what
language detection leaves out (an address is Latin letters in any language's text)."""

from __future__ import annotations

import re

__all__ = ["EMAIL", "FILE", "URL", "URL_TRAILING", "address_spans", "without_addresses"]

TLDS = "com|org|net|edu|gov|int|mil|info|biz|io|ai|co|in|uk|us|eu|de|fr|jp|au|ca|nic"
EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
URL = re.compile(
    r"(?:https?://|www\.)[^\s<>\"']+"  # with a scheme or www.: up to the next space
    rf"|(?<![\w@.-])(?:[A-Za-z0-9-]+\.)+(?:{TLDS})\b(?:/[^\s<>\"']*)?",  # a bare domain
    re.IGNORECASE,
)
# File names are copied as links are ("report.pdf", "ch001.xhtml": a model translated the
# latter into "001. अंजाम"): a name of Latin letters, digits, "_" and "-" with a common extension
# in lower case or capitals ("IMG_001.JPG"; not "Dr.Md" or "St.Tar"), and the folders before it
# ("/home/asha/notes.txt", "C:\Reports\q3.xlsx").
FILE_TYPES = (
    "pdf|docx?|xlsx?|pptx?|od[tsp]|rtf|txt|csv|tsv|md|html?|xhtml|xml|json|ya?ml|epub|srt|vtt"
    "|zip|gz|tgz|tar|7z|rar|jpe?g|png|gif|svg|webp|mp3|mp4|wav|mkv|mov|avi|exe|apk|iso|py|js|log"
)
FILE = re.compile(
    r"(?<![\w@./\\-])(?:(?:[A-Za-z]:)?[\\/]|~/)?(?:[A-Za-z0-9_.-]+[\\/])*"  # a folder path
    rf"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:{FILE_TYPES}|{FILE_TYPES.upper()})"
    r"(?![\w/\\-])"
)
URL_TRAILING = ".,;:!?)]}'\"”’"  # punctuation that ends a sentence or bracket, not an address


def without_addresses(text: str) -> str:
    """``text`` with every e-mail address and link replaced by a space."""
    if "@" not in text and "." not in text:
        return text
    return FILE.sub(" ", URL.sub(" ", EMAIL.sub(" ", text)))


def address_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every e-mail address and link match in ``text`` (they may overlap)."""
    if "@" not in text and "." not in text:
        return []
    return [(m.start(), m.end()) for p in (EMAIL, URL, FILE) for m in p.finditer(text)]
