"""Identifiers: words of Latin letters and digits that name one thing and are copied as written
(:mod:`anuvad.inference.verbatim`, behind a placeholder like a marked name).

"Flight AI302 leaves from gate 4B." came back as "… गे302 पत्ते … 4।", "Your order ID is
XK47Q9." as "आपका आदेश ID47Q9 है।" and "Use the coupon SAVE50 today." as "… एस एसोसिएशन … 50।":
only the digits were copied and the letters went to the model, which has never seen such a
word. An identifier here is a run of ASCII letters and digits, with single "-" or "/" between
parts ("AB12-345X"), holding at least one letter and one digit, standing as a word: flight and
train numbers, gates and seats, order IDs, coupon codes, product models ("S24", "MP3", "G20"),
hashes. Not an identifier, the model's to translate:

* a number with a unit or an ordinal suffix, each part of a range alike ("12th", "1990s",
  "9am", "10am-5pm", "5km", "2GB", "3x");
* a word of three letters or more joined by "-" to a number ("COVID-19", "Mission-2024": the
  model knows "कोविड-19").
"""

from __future__ import annotations

import re

__all__ = ["find_identifiers"]

_TOKEN = re.compile(r"(?<![\w@./\\+%$₹#-])[A-Za-z0-9]+(?:[-/][A-Za-z0-9]+)*(?![\w@]|[-/.]\w)")
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"[0-9]")
# A number with a unit, an ordinal or a plural suffix: the model's to translate.
_UNITS = (
    "st|nd|rd|th|s|am|pm|a|p|km|kms|kg|kgs|g|gm|gms|mg|ml|l|ltr|m|cm|mm|ft|in|hr|hrs|h|min|mins"
    "|sec|secs|ms|k|x|gb|mb|kb|tb|mah|mp|mbps|gbps|ghz|mhz|hz|w|kw|kwh|mw|v|kv|yr|yrs|cr|lakh|bn|mn"
)
_MEASURE = re.compile(rf"[0-9]+(?:[.,][0-9]+)?(?:{_UNITS})", re.IGNORECASE)
_WORD_AND_NUMBER = re.compile(r"[A-Za-z]{3,}-[0-9]+")


def find_identifiers(text: str) -> list[tuple[int, int]]:
    """(start, end) of each identifier in ``text`` (see the module docstring), in order."""
    found = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if not (_LETTER.search(token) and _DIGIT.search(token)):
            continue
        parts = re.split(r"[-/]", token)
        if all(_MEASURE.fullmatch(p) or p.isdigit() for p in parts):
            continue  # "12th", "10am-5pm", "5km"
        if _WORD_AND_NUMBER.fullmatch(token):
            continue  # "COVID-19"
        found.append((match.start(), match.end()))
    return found
